"""The generator's domain library: life domains, predicates, value pools, people and places.

Everything a generated trajectory can talk about comes from here. A predicate is described
once (`PredicateSpec`): its type and cardinality, the kind of scope its facts live in, the
keywords the readback β needs, a pool of canonical values (aliases are derived for times and
numbers and listed for enums), the certifier template, and a few clause templates in the
possessive style ("{poss} flight to {where} leaves at {value}") that `place.generate.phrasing`
wraps into sentences for every kind of event.

Placeholders in predicate templates:

- ``{poss}``: the possessor: "my" for the principal, "your" in a tool's claim, "Theo's" or
  "my husband's" for someone else (always lower-case; sentences are capitalised afterwards);
- ``{where}``: the scope phrase: the city of a trip ("Porto") for `trip` predicates, "at work"
  or "at home" for `place` predicates, unused otherwise;
- ``{value}``: a written form of the value (see `place.generate.phrasing.surface`).

Scope kinds: `trip` (one of the trajectory's trips; no default scope), `work` and `home`
(the predicate's `default_scope`, never written), `place` (work or home, always written as
"at work"/"at home"), `global`.

Rules the library keeps (tests/unit/test_generate.py checks them against a schema holding every
predicate, every value, every person and every city): a clause about one predicate never
contains a keyword of another; every clause, rendered with any value, any possessor and any
scope of its kind, is read by β as exactly that one fact; the certifier template is read as
that fact too; and no chatter line mentions a keyword, value, person or place.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from place.trajectory.model import Cardinality, ValueType

# ---------------------------------------------------------------- life domains

DOMAINS: tuple[str, ...] = (
    "travel",
    "work",
    "home",
    "health",
    "family and friends",
    "leisure",
    "finances",
)

SCOPE_KINDS: tuple[str, ...] = ("global", "trip", "work", "home", "place")


@dataclass(frozen=True)
class DateSpec:
    """How a date predicate's domain is drawn for one trajectory: `count` dates between
    `lo` days before the first conversation and `hi` days after the last one, or (`far`)
    in the years after the first conversation (passport expiry)."""

    lo: int = 10
    hi: int = 60
    far: bool = False


@dataclass(frozen=True)
class PredicateSpec:
    id: str
    domain: str
    type: ValueType
    cardinality: Cardinality
    scope: str
    """Scope kind: global, trip, work, home or place."""
    keywords: tuple[str, ...]
    template: str
    """The certifier's record sentence ({entity_name}, {value}, {scope})."""
    noun: str
    """What the slot is called after a possessive: "flight to {where}", "GP", "diet"."""
    says: tuple[str, ...]
    """Clauses stating a value: "{poss} flight to {where} leaves at {value}"."""
    asks: tuple[str, ...]
    """Questions about the slot, lower-case first letter."""
    pool: tuple = ()
    """Candidate canonical values: strings (time, number), ints (money amounts),
    (canonical, aliases) pairs (enum); empty for dates (see `dates`)."""
    dates: DateSpec | None = None
    subject: str = ""
    """Cardinality one: the copular subject, "{poss} flight to {where}"."""
    complement: str = ""
    """Cardinality one: the copular complement, "at {value}" ("{subject} is {complement}")."""
    drops: tuple[str, ...] = ()
    """Cardinality many: clauses retracting one value, the value right after a historical cue."""
    windows: bool = True
    """Whether facts may carry validity windows (scheduled and temporary values)."""

    def clauses(self) -> tuple[str, ...]:
        """Every clause stating a value (the copular one included for cardinality one)."""
        if self.cardinality == "one" and self.subject:
            return (*self.says, f"{self.subject} is {self.complement}")
        return self.says


def _p(**kw) -> PredicateSpec:
    for key in ("keywords", "says", "asks", "pool", "drops"):
        if key in kw:
            kw[key] = tuple(kw[key])
    if kw.get("type") == "date":
        kw["windows"] = False  # a window on a date-valued fact reads ambiguously
    return PredicateSpec(**kw)


WEEKDAYS: tuple[tuple[str, tuple[str, ...]], ...] = tuple(
    (day, (day + "s",))
    for day in ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
)

PREDICATES: tuple[PredicateSpec, ...] = (
    # ------------------------------------------------------------ travel
    _p(
        id="flight_time",
        domain="travel",
        type="time",
        cardinality="one",
        scope="trip",
        keywords=["flight", "flies", "departs", "departure"],
        template="{entity_name}'s flight ({scope}) departs at {value}",
        noun="flight to {where}",
        subject="{poss} flight to {where}",
        complement="at {value}",
        says=[
            "{poss} flight to {where} leaves at {value}",
            "{poss} flight to {where} departs at {value}",
            "{poss} {where} flight takes off at {value}",
        ],
        asks=[
            "what time does {poss} flight to {where} leave?",
            "when does {poss} {where} flight depart?",
            "what time is {poss} flight to {where}?",
        ],
        pool=[
            "06:05",
            "06:45",
            "07:10",
            "07:15",
            "08:50",
            "09:40",
            "10:05",
            "11:20",
            "13:35",
            "15:25",
            "17:50",
            "18:55",
            "20:10",
        ],
    ),
    _p(
        id="return_train",
        domain="travel",
        type="time",
        cardinality="one",
        scope="trip",
        keywords=["return train", "train back"],
        template="{entity_name}'s return train ({scope}) leaves at {value}",
        noun="train back from {where}",
        subject="{poss} train back from {where}",
        complement="at {value}",
        says=[
            "{poss} train back from {where} leaves at {value}",
            "{poss} return train from {where} is at {value}",
        ],
        asks=[
            "what time is {poss} train back from {where}?",
            "when does {poss} return train from {where} leave?",
        ],
        pool=[
            "10:50",
            "12:10",
            "14:20",
            "15:35",
            "16:40",
            "17:05",
            "18:15",
            "19:30",
            "20:45",
        ],
    ),
    _p(
        id="hotel",
        domain="travel",
        type="enum",
        cardinality="one",
        scope="trip",
        keywords=["hotel", "guesthouse", "staying at"],
        template="{entity_name}'s hotel ({scope}) is {value}",
        noun="hotel in {where}",
        subject="{poss} hotel in {where}",
        complement="{value}",
        says=[
            "{poss} hotel in {where} is {value}",
            "in {where}, {poss} hotel is {value}",
        ],
        asks=[
            "what's {poss} hotel in {where}?",
            "which hotel is {poss} booking in {where}?",
        ],
        pool=[
            ("Casa Azul", ["Azul"]),
            ("Pestana Vintage", ["Pestana"]),
            ("Hotel Infante", ["Infante"]),
            ("Saga Hotel", ["Saga"]),
            ("Hotel Bristol", ["Bristol"]),
            ("Hotel Aurora", ["Aurora"]),
            ("Villa Serena", ["Serena"]),
            ("Hotel Lumen", ["Lumen"]),
            ("Linden House", []),
            ("Hotel Meridia", ["Meridia"]),
        ],
    ),
    _p(
        id="hotel_nights",
        domain="travel",
        type="number",
        cardinality="one",
        scope="trip",
        keywords=["nights"],
        template="{entity_name} booked {value} nights ({scope})",
        noun="stay in {where}",
        subject="{poss} stay in {where}",
        complement="{value} nights",
        says=[
            "{poss} stay in {where} is {value} nights",
            "{poss} booking in {where} covers {value} nights",
        ],
        asks=[
            "how many nights is {poss} stay in {where}?",
            "for how many nights is {poss} booking in {where}?",
        ],
        pool=["2", "3", "4", "5", "6", "7", "8", "9"],
    ),
    _p(
        id="trip_budget",
        domain="travel",
        type="money",
        cardinality="one",
        scope="trip",
        keywords=["budget"],
        template="{entity_name}'s budget ({scope}) is {value}",
        noun="budget for {where}",
        subject="{poss} budget for {where}",
        complement="{value}",
        says=[
            "{poss} budget for {where} is {value}",
            "for {where}, {poss} budget is {value}",
        ],
        asks=[
            "what's {poss} budget for {where}?",
            "how much is {poss} {where} budget?",
        ],
        pool=[600, 750, 800, 950, 1100, 1200, 1500, 1800, 2000],
    ),
    _p(
        id="car_rental",
        domain="travel",
        type="enum",
        cardinality="one",
        scope="trip",
        keywords=["rental car", "car hire", "hire car"],
        template="{entity_name}'s rental car ({scope}) is from {value}",
        noun="rental car in {where}",
        subject="{poss} rental car in {where}",
        complement="from {value}",
        says=[
            "{poss} rental car in {where} is from {value}",
            "{poss} car hire in {where} is with {value}",
        ],
        asks=[
            "which company is {poss} rental car in {where} from?",
            "who is {poss} car hire in {where} with?",
        ],
        pool=[
            ("Sixt", []),
            ("Europcar", []),
            ("Hertz", []),
            ("Avis", []),
            ("Enterprise", []),
            ("Alamo", []),
            ("Goldcar", []),
        ],
    ),
    _p(
        id="checkin_date",
        domain="travel",
        type="date",
        cardinality="one",
        scope="trip",
        keywords=["check-in", "check in", "checking in"],
        template="{entity_name}'s check-in ({scope}) is on {value}",
        noun="check-in in {where}",
        subject="{poss} check-in in {where}",
        complement="on {value}",
        says=[
            "{poss} check-in in {where} is on {value}",
            "in {where}, {poss} check-in date is {value}",
        ],
        asks=[
            "when is {poss} check-in in {where}?",
            "what date is {poss} check-in in {where}?",
        ],
        dates=DateSpec(lo=-5, hi=90),
    ),
    _p(
        id="excursions",
        domain="travel",
        type="enum",
        cardinality="many",
        scope="trip",
        keywords=["excursion", "excursions", "tour", "tours"],
        template="{entity_name}'s excursions ({scope}) include the {value}",
        noun="excursions in {where}",
        says=[
            "{poss} excursions in {where} include the {value}",
            "in {where}, {poss} excursions are the {value}",
        ],
        drops=[
            "{poss} excursions in {where} no longer include the {value}",
            "we cancelled {poss} {value} in {where}, so that excursion is off",
        ],
        asks=[
            "which excursions are booked for {poss} stay in {where}?",
            "what are {poss} excursions in {where}?",
        ],
        pool=[
            ("food tour", []),
            ("walking tour", []),
            ("boat tour", ["river cruise"]),
            ("wine tasting", []),
            ("museum pass", []),
            ("cooking workshop", []),
        ],
    ),
    _p(
        id="passport_expiry",
        domain="travel",
        type="date",
        cardinality="one",
        scope="global",
        keywords=["passport"],
        template="{entity_name}'s passport expires on {value}",
        noun="passport",
        subject="{poss} passport",
        complement="valid until {value}",
        says=[
            "{poss} passport expires on {value}",
            "{poss} passport is valid until {value}",
        ],
        asks=[
            "when does {poss} passport expire?",
            "until when is {poss} passport valid?",
        ],
        dates=DateSpec(far=True),
    ),
    _p(
        id="seat_preference",
        domain="travel",
        type="enum",
        cardinality="one",
        scope="global",
        keywords=["seat"],
        template="{entity_name}'s seat preference is {value}",
        noun="seat preference",
        subject="{poss} seat preference",
        complement="{value}",
        says=[
            "{poss} seat preference is {value}",
            "{poss} preferred seat is {value}",
        ],
        asks=[
            "what's {poss} seat preference?",
            "which seat is {poss} preferred one?",
        ],
        pool=[
            ("window", ["window seat"]),
            ("aisle", ["aisle seat"]),
            ("exit row", []),
            ("front row", []),
            ("bulkhead", []),
        ],
    ),
    # ------------------------------------------------------------ work
    _p(
        id="standup_time",
        domain="work",
        type="time",
        cardinality="one",
        scope="work",
        keywords=["standup", "stand-up"],
        template="{entity_name}'s daily standup at work is at {value}",
        noun="standup",
        subject="{poss} standup",
        complement="at {value}",
        says=[
            "{poss} daily standup is at {value}",
            "{poss} stand-up starts at {value}",
        ],
        asks=[
            "what time is {poss} standup?",
            "when does {poss} daily stand-up start?",
        ],
        pool=["08:30", "08:45", "09:00", "09:15", "09:30", "09:45", "10:00", "10:15"],
    ),
    _p(
        id="lunch_break",
        domain="work",
        type="time",
        cardinality="one",
        scope="work",
        keywords=["lunch break"],
        template="{entity_name}'s lunch break at work is at {value}",
        noun="lunch break",
        subject="{poss} lunch break",
        complement="at {value}",
        says=[
            "{poss} lunch break is at {value}",
            "{poss} lunch break starts at {value}",
        ],
        asks=[
            "when is {poss} lunch break?",
            "what time does {poss} lunch break start?",
        ],
        pool=["11:30", "11:45", "12:00", "12:15", "12:30", "13:00", "13:15", "13:30"],
    ),
    _p(
        id="report_deadline",
        domain="work",
        type="date",
        cardinality="one",
        scope="work",
        keywords=["deadline", "due date"],
        template="{entity_name}'s report deadline at work is {value}",
        noun="report deadline",
        subject="{poss} report deadline",
        complement="{value}",
        says=[
            "{poss} report deadline is {value}",
            "the due date for {poss} report is {value}",
        ],
        asks=[
            "when is {poss} report deadline?",
            "what's the due date for {poss} report?",
        ],
        dates=DateSpec(lo=-5, hi=45),
    ),
    _p(
        id="desk_number",
        domain="work",
        type="number",
        cardinality="one",
        scope="work",
        keywords=["desk"],
        template="{entity_name} sits at desk {value} at work",
        noun="desk",
        subject="{poss} desk",
        complement="number {value}",
        says=[
            "{poss} desk is number {value}",
            "{poss} desk at the office is {value}",
        ],
        asks=[
            "what's {poss} desk number?",
            "which desk is {poss} spot at the office?",
        ],
        pool=["7", "12", "14", "19", "23", "27", "31", "36", "42", "48"],
    ),
    _p(
        id="parking_spot",
        domain="work",
        type="number",
        cardinality="one",
        scope="work",
        keywords=["parking spot", "parking space", "parking"],
        template="{entity_name}'s parking spot at work is number {value}",
        noun="parking spot",
        subject="{poss} parking spot",
        complement="number {value}",
        says=[
            "{poss} parking spot is number {value}",
            "{poss} parking space at the office is {value}",
        ],
        asks=[
            "what's {poss} parking spot number?",
            "which parking space is {poss} one?",
        ],
        pool=["3", "8", "11", "16", "22", "29", "34", "57", "63"],
    ),
    _p(
        id="salary",
        domain="work",
        type="money",
        cardinality="one",
        scope="work",
        keywords=["salary"],
        template="{entity_name}'s monthly salary is {value}",
        noun="salary",
        subject="{poss} monthly salary",
        complement="{value}",
        says=[
            "{poss} monthly salary is {value}",
            "{poss} salary comes to {value} a month",
        ],
        asks=[
            "what's {poss} monthly salary?",
            "how much is {poss} salary?",
        ],
        pool=[2800, 3100, 3400, 3650, 3900, 4200, 4600],
    ),
    _p(
        id="manager",
        domain="work",
        type="enum",
        cardinality="one",
        scope="work",
        keywords=["manager", "boss"],
        template="{entity_name}'s manager at work is {value}",
        noun="manager",
        subject="{poss} manager",
        complement="{value}",
        says=[
            "{poss} manager is {value}",
            "{poss} boss is {value}",
        ],
        asks=[
            "who is {poss} manager?",
            "who's {poss} boss these days?",
        ],
        pool=[
            ("Sven Dahl", ["Sven"]),
            ("Mireille Fontaine", ["Mireille"]),
            ("Karim Benali", ["Karim"]),
            ("Ingrid Holm", ["Ingrid"]),
            ("Tomasz Nowak", ["Tomasz"]),
            ("Aiko Tanaka", ["Aiko"]),
            ("Rafael Ortiz", ["Rafael"]),
            ("Helen Brooks", ["Helen"]),
        ],
    ),
    _p(
        id="current_project",
        domain="work",
        type="enum",
        cardinality="one",
        scope="work",
        keywords=["project"],
        template="{entity_name}'s current project at work is {value}",
        noun="main project",
        subject="{poss} main project",
        complement="{value}",
        says=[
            "{poss} main project is {value}",
            "{poss} current project is {value}",
        ],
        asks=[
            "what's {poss} main project?",
            "which project is {poss} focus right now?",
        ],
        pool=[
            ("Project Atlas", ["Atlas"]),
            ("Project Beacon", ["Beacon"]),
            ("Project Cobalt", ["Cobalt"]),
            ("Project Juniper", ["Juniper"]),
            ("Project Orion", ["Orion"]),
            ("Project Tidal", ["Tidal"]),
        ],
    ),
    _p(
        id="office_days",
        domain="work",
        type="enum",
        cardinality="many",
        scope="work",
        keywords=["office days", "in the office", "go in on"],
        template="{entity_name} works in the office on {value}",
        noun="office days",
        says=[
            "{poss} office days include {value}",
            "{poss} office days are {value}",
        ],
        drops=[
            "{poss} office days no longer include {value}",
        ],
        asks=[
            "which days are {poss} office days?",
            "what are {poss} office days now?",
        ],
        pool=WEEKDAYS[:5],
    ),
    _p(
        id="commute_mode",
        domain="work",
        type="enum",
        cardinality="one",
        scope="global",
        keywords=["commute", "commuting"],
        template="{entity_name}'s commute is by {value}",
        noun="commute",
        subject="{poss} commute",
        complement="by {value}",
        says=[
            "{poss} commute is by {value}",
            "{poss} daily commute is by {value}",
        ],
        asks=[
            "how is {poss} commute done these days?",
            "what's {poss} way of commuting?",
        ],
        pool=[
            ("bike", ["bicycle"]),
            ("train", []),
            ("bus", []),
            ("tram", []),
            ("e-scooter", ["scooter"]),
            ("ferry", []),
        ],
    ),
    # ------------------------------------------------------------ home
    _p(
        id="rent",
        domain="home",
        type="money",
        cardinality="one",
        scope="home",
        keywords=["rent"],
        template="{entity_name}'s monthly rent for the flat is {value}",
        noun="rent",
        subject="{poss} rent",
        complement="{value} a month",
        says=[
            "{poss} rent is {value} a month",
            "{poss} monthly rent comes to {value}",
        ],
        asks=[
            "how much is {poss} rent?",
            "what's {poss} monthly rent?",
        ],
        pool=[980, 1150, 1290, 1390, 1450, 1520, 1600, 1750],
    ),
    _p(
        id="thermostat",
        domain="home",
        type="number",
        cardinality="one",
        scope="home",
        keywords=["thermostat", "heating"],
        template="{entity_name}'s thermostat at home is set to {value} degrees",
        noun="thermostat",
        subject="{poss} thermostat",
        complement="set to {value} degrees",
        says=[
            "{poss} thermostat is set to {value} degrees",
            "{poss} heating is set to {value} degrees",
        ],
        asks=[
            "what's {poss} thermostat set to?",
            "what temperature is {poss} heating set to?",
        ],
        pool=["17", "18", "19", "20", "21", "22", "23"],
    ),
    _p(
        id="cleaner_day",
        domain="home",
        type="enum",
        cardinality="one",
        scope="home",
        keywords=["cleaner"],
        template="{entity_name}'s cleaner comes on {value}",
        noun="cleaner's day",
        subject="{poss} cleaner's day",
        complement="{value}",
        says=[
            "{poss} cleaner comes on {value}",
            "{poss} cleaner's day is {value}",
        ],
        asks=[
            "which day does {poss} cleaner come?",
            "when is {poss} cleaner's day?",
        ],
        pool=WEEKDAYS[:6],
    ),
    _p(
        id="internet_provider",
        domain="home",
        type="enum",
        cardinality="one",
        scope="home",
        keywords=["internet", "broadband", "wifi"],
        template="{entity_name}'s internet provider at home is {value}",
        noun="internet provider",
        subject="{poss} internet provider",
        complement="{value}",
        says=[
            "{poss} internet provider is {value}",
            "{poss} broadband is with {value}",
        ],
        asks=[
            "who is {poss} internet provider?",
            "which company is {poss} broadband with?",
        ],
        pool=[
            ("Fibrenet", []),
            ("Skyline Broadband", ["Skyline"]),
            ("Voxa", []),
            ("Netwave", []),
            ("Lumo Fibre", ["Lumo"]),
            ("Orbitel", []),
        ],
    ),
    _p(
        id="houseplants",
        domain="home",
        type="enum",
        cardinality="many",
        scope="home",
        keywords=["plants", "plant"],
        template="{entity_name}'s plants at home include: {value}",
        noun="plants",
        says=[
            "{poss} plants include {value}",
            "{poss} plant collection includes {value}",
        ],
        drops=[
            "{poss} plants no longer include the {value}",
        ],
        asks=[
            "which plants are in {poss} collection?",
            "what plants does {poss} collection have?",
        ],
        pool=[
            ("monstera", []),
            ("fern", []),
            ("cactus", []),
            ("orchid", []),
            ("bonsai", []),
            ("peace lily", []),
        ],
    ),
    _p(
        id="coffee_order",
        domain="home",
        type="enum",
        cardinality="one",
        scope="place",
        keywords=["coffee"],
        template="{entity_name}'s usual coffee ({scope}) is {value}",
        noun="usual coffee {where}",
        subject="{poss} usual coffee {where}",
        complement="{value}",
        says=[
            "{poss} usual coffee {where} is {value}",
            "{where} {poss} coffee is {value}",
        ],
        asks=[
            "what's {poss} usual coffee {where}?",
            "what coffee is {poss} usual order {where}?",
        ],
        pool=[
            ("cortado", []),
            ("oat flat white", ["flat white with oat milk"]),
            ("americano", []),
            ("double espresso", ["doppio"]),
            ("cappuccino", []),
            ("cold brew", []),
            ("macchiato", []),
        ],
    ),
    _p(
        id="focus_music",
        domain="home",
        type="enum",
        cardinality="one",
        scope="place",
        keywords=["playlist", "music"],
        template="{entity_name}'s focus music ({scope}) is {value}",
        noun="focus music {where}",
        subject="{poss} focus music {where}",
        complement="{value}",
        says=[
            "{poss} focus music {where} is {value}",
            "{where} {poss} playlist is {value}",
        ],
        asks=[
            "what's {poss} focus music {where}?",
            "which playlist is {poss} go-to {where}?",
        ],
        pool=[
            ("lo-fi", ["lofi"]),
            ("jazz", []),
            ("classical", []),
            ("ambient", []),
            ("synthwave", []),
            ("bossa nova", []),
        ],
    ),
    # ------------------------------------------------------------ health
    _p(
        id="dentist_time",
        domain="health",
        type="time",
        cardinality="one",
        scope="global",
        keywords=["dentist", "dental"],
        template="{entity_name}'s dentist appointment is at {value}",
        noun="dentist appointment",
        subject="{poss} dentist appointment",
        complement="at {value}",
        says=[
            "{poss} dentist appointment is at {value}",
            "{poss} dental check-up is at {value}",
        ],
        asks=[
            "what time is {poss} dentist appointment?",
            "when is {poss} dental check-up?",
        ],
        pool=["08:30", "09:20", "10:40", "11:15", "14:00", "15:10", "16:30", "17:45"],
    ),
    _p(
        id="gp_doctor",
        domain="health",
        type="enum",
        cardinality="one",
        scope="global",
        keywords=["GP", "doctor"],
        template="{entity_name}'s GP is {value}",
        noun="GP",
        subject="{poss} GP",
        complement="{value}",
        says=[
            "{poss} GP is {value}",
            "{poss} family doctor is {value}",
        ],
        asks=[
            "who is {poss} GP?",
            "who's {poss} family doctor?",
        ],
        pool=[
            ("Dr. Haddad", ["Dr Haddad", "Haddad"]),
            ("Dr. Verhoeven", ["Dr Verhoeven", "Verhoeven"]),
            ("Dr. Okafor", ["Dr Okafor", "Okafor"]),
            ("Dr. Lindqvist", ["Dr Lindqvist", "Lindqvist"]),
            ("Dr. Moreau", ["Dr Moreau", "Moreau"]),
            ("Dr. Castillo", ["Dr Castillo", "Castillo"]),
        ],
    ),
    _p(
        id="diet",
        domain="health",
        type="enum",
        cardinality="many",
        scope="global",
        keywords=["diet", "dietary", "vegetarian", "vegan", "allergic", "allergy", "intolerant"],
        template="{entity_name}'s dietary requirement: {value}",
        noun="diet",
        says=[
            "{poss} dietary needs are {value}",
            "{poss} diet: {value}",
        ],
        drops=[
            "{poss} diet no longer includes {value}",
            "{poss} dietary needs no longer include {value}",
        ],
        asks=[
            "what are {poss} dietary needs?",
            "what should a cook know about {poss} diet?",
        ],
        pool=[
            ("vegetarian", ["veggie"]),
            ("vegan", []),
            ("nut allergy", ["allergic to nuts"]),
            ("lactose intolerance", ["lactose intolerant"]),
            ("gluten-free", ["coeliac"]),
            ("shellfish allergy", ["allergic to shellfish"]),
        ],
    ),
    _p(
        id="medication",
        domain="health",
        type="enum",
        cardinality="many",
        scope="global",
        keywords=["medication", "medications", "supplements"],
        template="{entity_name}'s medication list includes {value}",
        noun="medication list",
        says=[
            "{poss} medication list includes {value}",
            "{poss} daily supplements include {value}",
        ],
        drops=[
            "{poss} medication list no longer includes {value}",
        ],
        asks=[
            "what's on {poss} medication list?",
            "which supplements are on {poss} list?",
        ],
        pool=[
            ("vitamin D", []),
            ("iron tablets", []),
            ("antihistamines", []),
            ("magnesium", []),
            ("probiotics", []),
            ("zinc", []),
        ],
    ),
    _p(
        id="vaccination_date",
        domain="health",
        type="date",
        cardinality="one",
        scope="global",
        keywords=["vaccination", "booster", "jab"],
        template="{entity_name}'s vaccination appointment is on {value}",
        noun="booster appointment",
        subject="{poss} booster appointment",
        complement="on {value}",
        says=[
            "{poss} booster appointment is on {value}",
            "{poss} vaccination is booked for {value}",
        ],
        asks=[
            "when is {poss} booster appointment?",
            "what date is {poss} vaccination?",
        ],
        dates=DateSpec(lo=-5, hi=60),
    ),
    _p(
        id="step_goal",
        domain="health",
        type="number",
        cardinality="one",
        scope="global",
        keywords=["step goal", "steps"],
        template="{entity_name}'s daily step goal is {value} steps",
        noun="step goal",
        subject="{poss} daily step goal",
        complement="{value} steps",
        says=[
            "{poss} daily step goal is {value} steps",
            "{poss} step goal is {value} a day",
        ],
        asks=[
            "what's {poss} daily step goal?",
            "how many steps is {poss} daily goal?",
        ],
        pool=["6000", "7000", "8000", "9000", "10000", "12000", "15000"],
    ),
    # ------------------------------------------------------------ family and friends
    _p(
        id="birthday_dinner",
        domain="family and friends",
        type="date",
        cardinality="one",
        scope="global",
        keywords=["birthday"],
        template="{entity_name}'s birthday dinner is on {value}",
        noun="birthday dinner",
        subject="{poss} birthday dinner",
        complement="on {value}",
        says=[
            "{poss} birthday dinner is on {value}",
            "we're celebrating {poss} birthday on {value}",
        ],
        asks=[
            "when is {poss} birthday dinner?",
            "what date is {poss} birthday dinner?",
        ],
        dates=DateSpec(lo=-5, hi=45),
    ),
    _p(
        id="party_guests",
        domain="family and friends",
        type="number",
        cardinality="one",
        scope="global",
        keywords=["guests", "guest list"],
        template="{entity_name}'s party has {value} guests",
        noun="party guest list",
        subject="{poss} housewarming party",
        complement="for {value} guests",
        says=[
            "{poss} housewarming party is for {value} guests",
            "{poss} party has {value} guests",
        ],
        asks=[
            "how many guests are coming to {poss} party?",
            "how long is {poss} party guest list?",
        ],
        pool=["8", "10", "12", "15", "18", "20", "24", "30"],
    ),
    _p(
        id="gift_limit",
        domain="family and friends",
        type="money",
        cardinality="one",
        scope="global",
        keywords=["gift"],
        template="{entity_name}'s gift limit is {value}",
        noun="gift limit",
        subject="{poss} gift limit",
        complement="{value}",
        says=[
            "{poss} gift limit is {value}",
            "{poss} limit per gift is {value}",
        ],
        asks=[
            "what's {poss} gift limit?",
            "how much can {poss} gift cost at most?",
        ],
        pool=[30, 40, 50, 60, 75, 80, 100],
    ),
    _p(
        id="restaurant",
        domain="family and friends",
        type="enum",
        cardinality="one",
        scope="global",
        keywords=["restaurant"],
        template="{entity_name}'s favourite restaurant is {value}",
        noun="favourite restaurant",
        subject="{poss} favourite restaurant",
        complement="{value}",
        says=[
            "{poss} favourite restaurant is {value}",
            "{poss} go-to restaurant is {value}",
        ],
        asks=[
            "what's {poss} favourite restaurant?",
            "which restaurant is {poss} go-to?",
        ],
        pool=[
            ("Trattoria Nonna", ["Nonna"]),
            ("Sakura Ramen", ["Sakura"]),
            ("El Faro", []),
            ("Bistro Marcel", ["Marcel"]),
            ("The Copper Pot", ["Copper Pot"]),
            ("Mezze House", []),
        ],
    ),
    _p(
        id="shoe_size",
        domain="family and friends",
        type="number",
        cardinality="one",
        scope="global",
        keywords=["shoe size", "shoes", "shoe", "boots"],
        template="{entity_name}'s shoe size is {value}",
        noun="shoe size",
        subject="{poss} shoe size",
        complement="{value}",
        says=[
            "{poss} shoe size is {value}",
            "{poss} shoes are a size {value}",
        ],
        asks=[
            "what's {poss} shoe size?",
            "what size are {poss} shoes?",
        ],
        pool=["36", "37", "38", "39", "40", "41", "42", "43", "44", "45"],
        windows=False,
    ),
    # ------------------------------------------------------------ leisure
    _p(
        id="yoga_class",
        domain="leisure",
        type="time",
        cardinality="one",
        scope="global",
        keywords=["yoga"],
        template="{entity_name}'s yoga class is at {value}",
        noun="yoga class",
        subject="{poss} yoga class",
        complement="at {value}",
        says=[
            "{poss} yoga class is at {value}",
            "{poss} yoga session starts at {value}",
        ],
        asks=[
            "what time is {poss} yoga class?",
            "when does {poss} yoga session start?",
        ],
        pool=["06:30", "07:00", "07:30", "12:15", "18:00", "18:30", "19:45", "20:15"],
    ),
    _p(
        id="tennis_time",
        domain="leisure",
        type="time",
        cardinality="one",
        scope="global",
        keywords=["tennis"],
        template="{entity_name}'s tennis lesson is at {value}",
        noun="tennis lesson",
        subject="{poss} tennis lesson",
        complement="at {value}",
        says=[
            "{poss} tennis lesson is at {value}",
            "{poss} weekly tennis starts at {value}",
        ],
        asks=[
            "what time is {poss} tennis lesson?",
            "when does {poss} tennis start?",
        ],
        pool=["07:00", "08:00", "10:30", "16:45", "17:30", "19:00", "20:00"],
    ),
    _p(
        id="gym_fee",
        domain="leisure",
        type="money",
        cardinality="one",
        scope="global",
        keywords=["gym"],
        template="{entity_name}'s gym membership costs {value} a month",
        noun="gym membership",
        subject="{poss} gym membership",
        complement="{value} a month",
        says=[
            "{poss} gym membership is {value} a month",
            "{poss} gym costs {value} a month",
        ],
        asks=[
            "how much is {poss} gym membership?",
            "what does {poss} gym cost per month?",
        ],
        pool=[25, 29, 35, 39, 45, 49, 55],
    ),
    _p(
        id="swim_laps",
        domain="leisure",
        type="number",
        cardinality="one",
        scope="global",
        keywords=["laps", "swim", "swimming"],
        template="{entity_name}'s swim target is {value} laps",
        noun="swim target",
        subject="{poss} swim target",
        complement="{value} laps",
        says=[
            "{poss} swim target is {value} laps",
            "{poss} swimming goal is {value} laps",
        ],
        asks=[
            "how many laps is {poss} swim target?",
            "what's {poss} swimming goal in laps?",
        ],
        pool=["10", "16", "20", "24", "30", "40", "50"],
    ),
    _p(
        id="book_club_day",
        domain="leisure",
        type="enum",
        cardinality="one",
        scope="global",
        keywords=["book club"],
        template="{entity_name}'s book club meets on {value}",
        noun="book club",
        subject="{poss} book club",
        complement="on {value}",
        says=[
            "{poss} book club meets on {value}",
            "{poss} book club is on {value}",
        ],
        asks=[
            "which day does {poss} book club meet?",
            "when is {poss} book club?",
        ],
        pool=WEEKDAYS,
    ),
    _p(
        id="subscriptions",
        domain="leisure",
        type="enum",
        cardinality="many",
        scope="global",
        keywords=["subscription", "subscriptions", "subscribed"],
        template="{entity_name}'s subscriptions include {value}",
        noun="subscriptions",
        says=[
            "{poss} subscriptions include {value}",
            "{poss} streaming subscriptions are {value}",
        ],
        drops=[
            "we cancelled {poss} {value} subscription",
            "{poss} subscriptions no longer include {value}",
        ],
        asks=[
            "which subscriptions are on {poss} account?",
            "what subscriptions does {poss} account have?",
        ],
        pool=[
            ("Netflix", []),
            ("Spotify", []),
            ("Audible", []),
            ("Mubi", []),
            ("Deezer", []),
            ("Headspace", []),
        ],
    ),
    _p(
        id="hobbies",
        domain="leisure",
        type="enum",
        cardinality="many",
        scope="global",
        keywords=["hobby", "hobbies"],
        template="{entity_name}'s hobbies include {value}",
        noun="hobbies",
        says=[
            "{poss} hobbies include {value}",
            "{poss} hobbies are {value}",
        ],
        drops=[
            "{poss} hobbies no longer include {value}",
        ],
        asks=[
            "what are {poss} hobbies?",
            "which hobbies fill {poss} week?",
        ],
        pool=[
            ("pottery", []),
            ("climbing", ["bouldering"]),
            ("chess", []),
            ("salsa", ["salsa dancing"]),
            ("watercolours", ["watercolour painting"]),
            ("choir", []),
        ],
    ),
    # ------------------------------------------------------------ finances
    _p(
        id="phone_plan",
        domain="finances",
        type="money",
        cardinality="one",
        scope="global",
        keywords=["phone plan", "mobile plan"],
        template="{entity_name}'s phone plan costs {value} a month",
        noun="phone plan",
        subject="{poss} phone plan",
        complement="{value} a month",
        says=[
            "{poss} phone plan is {value} a month",
            "{poss} mobile plan costs {value} a month",
        ],
        asks=[
            "how much is {poss} phone plan?",
            "what does {poss} mobile plan cost?",
        ],
        pool=[12, 15, 19, 22, 27, 32],
    ),
    _p(
        id="savings_goal",
        domain="finances",
        type="money",
        cardinality="one",
        scope="global",
        keywords=["savings goal", "saving up"],
        template="{entity_name}'s savings goal is {value}",
        noun="savings goal",
        subject="{poss} savings goal",
        complement="{value}",
        says=[
            "{poss} savings goal is {value}",
            "{poss} savings goal for the year is {value}",
        ],
        asks=[
            "what's {poss} savings goal?",
            "how much is {poss} savings goal for the year?",
        ],
        pool=[2000, 3000, 4500, 5000, 6000, 8000, 10000],
    ),
    _p(
        id="insurance_renewal",
        domain="finances",
        type="date",
        cardinality="one",
        scope="global",
        keywords=["insurance"],
        template="{entity_name}'s insurance renews on {value}",
        noun="insurance renewal",
        subject="{poss} insurance renewal",
        complement="on {value}",
        says=[
            "{poss} insurance renewal is on {value}",
            "{poss} car insurance renews on {value}",
        ],
        asks=[
            "when is {poss} insurance renewal?",
            "what date does {poss} insurance renew?",
        ],
        dates=DateSpec(lo=0, hi=90),
    ),
)

PREDICATES_BY_ID: dict[str, PredicateSpec] = {p.id: p for p in PREDICATES}

# ---------------------------------------------------------------- people

# (name, gender) - gender only picks the relation word ("my husband", "my sister").
PEOPLE: tuple[tuple[str, str], ...] = (
    ("Nora", "f"),
    ("Sam", "m"),
    ("Maya", "f"),
    ("Leo", "m"),
    ("Ines", "f"),
    ("Jonas", "m"),
    ("Theo", "m"),
    ("Priya", "f"),
    ("Lena", "f"),
    ("Marta", "f"),
    ("Oskar", "m"),
    ("Elif", "f"),
    ("Ravi", "m"),
    ("Clara", "f"),
    ("Hugo", "m"),
    ("Zoe", "f"),
    ("Felix", "m"),
    ("Amara", "f"),
    ("Nils", "m"),
    ("Sofia", "f"),
    ("Mateo", "m"),
    ("Yara", "f"),
    ("Ben", "m"),
    ("Ada", "f"),
    ("Luca", "m"),
    ("Freya", "f"),
    ("Omar", "m"),
    ("Hana", "f"),
    ("Emil", "m"),
    ("Kira", "f"),
    ("Anton", "m"),
    ("Noor", "f"),
    ("Tariq", "m"),
    ("Greta", "f"),
    ("Milan", "m"),
    ("Selin", "f"),
)

# relation -> alias by gender (None: no alias; the person is named only).
RELATIONS: dict[str, dict[str, str | None]] = {
    "partner": {"f": "my wife", "m": "my husband"},
    "sibling": {"f": "my sister", "m": "my brother"},
    "parent": {"f": "my mum", "m": "my dad"},
    "friend": {"f": None, "m": None},
    "colleague": {"f": None, "m": None},
}

# ---------------------------------------------------------------- places

CITIES: tuple[str, ...] = (
    "Porto",
    "Oslo",
    "Lisbon",
    "Vienna",
    "Rome",
    "Seville",
    "Krakow",
    "Ghent",
    "Bergen",
    "Lyon",
    "Valencia",
    "Tallinn",
    "Bologna",
    "Dubrovnik",
    "Edinburgh",
    "Copenhagen",
    "Prague",
    "Budapest",
    "Ljubljana",
    "Salzburg",
    "Marseille",
    "Antwerp",
)

WORK_ALIASES: tuple[str, ...] = ("at work", "the office")
HOME_ALIASES: tuple[str, ...] = ("at home", "the flat")

# ---------------------------------------------------------------- currencies

CURRENCIES: tuple[str, ...] = ("EUR", "GBP", "USD", "CHF")

# Written forms of an amount in each currency ({a}: digits, {c}: digits with thousands
# separators). Each is a form `place.lexicon.surface.money_forms` recognises.
MONEY_FORMS: dict[str, tuple[str, ...]] = {
    "EUR": ("€{c}", "€{a}", "{c} euros", "EUR {a}"),
    "GBP": ("£{c}", "£{a}", "{c} pounds"),
    "USD": ("${c}", "${a}", "{c} dollars", "US${c}"),
    "CHF": ("CHF {c}", "CHF {a}", "{c} Swiss francs", "{a} francs"),
}

# ---------------------------------------------------------------- value aliases

_ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS = ["_", "_", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
MONTHS: tuple[str, ...] = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)


def number_words(n: int) -> str | None:
    """English words for 0-99 and whole thousands up to 99 000 ("twenty-seven",
    "ten thousand"); None otherwise."""
    if 0 <= n < 20:
        return _ONES[n]
    if 20 <= n < 100:
        return _TENS[n // 10] + ("-" + _ONES[n % 10] if n % 10 else "")
    if n % 1000 == 0 and 0 < n < 100_000:
        return f"{number_words(n // 1000)} thousand"
    return None


def clock_phrase(canonical: str) -> str | None:
    """A spoken clock time: "quarter past seven", "twenty to ten", "half past six in the
    evening"; None for minutes that are not a multiple of five."""
    hour, minute = (int(p) for p in canonical.split(":"))
    if minute % 5:
        return None

    def h12(h: int) -> str:
        return _ONES[h % 12 or 12]

    if minute == 0:
        phrase = f"{h12(hour)} o'clock"
    elif minute == 15:
        phrase = f"quarter past {h12(hour)}"
    elif minute == 30:
        phrase = f"half past {h12(hour)}"
    elif minute == 45:
        phrase = f"quarter to {h12(hour + 1)}"
    elif minute < 30:
        phrase = f"{number_words(minute)} past {h12(hour)}"
    else:
        phrase = f"{number_words(60 - minute)} to {h12(hour + 1)}"
    if 12 <= hour < 18:
        phrase += " in the afternoon"
    elif hour >= 18:
        phrase += " in the evening"
    return phrase


def ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def date_aliases(day: dt.date, with_year: bool) -> list[str]:
    """Ordinal spellings a person or a model writes: "14th March", "March 14th",
    "14th of March" (plus the year when the date is far away)."""
    month = MONTHS[day.month - 1]
    forms = [f"{ordinal(day.day)} {month}", f"{month} {ordinal(day.day)}"]
    if with_year:
        forms += [f"{day.day} {month} {day.year}", f"{month} {day.day}, {day.year}"]
    else:
        forms.append(f"{ordinal(day.day)} of {month}")
    return forms


def value_aliases(spec: PredicateSpec, canonical: str, listed: tuple[str, ...] = ()) -> list:
    """The schema aliases of one canonical value."""
    if spec.type == "time":
        phrase = clock_phrase(canonical)
        return [phrase] if phrase else []
    if spec.type == "number":
        words = number_words(int(canonical))
        return [words] if words else []
    return list(listed)


# ---------------------------------------------------------------- library self-description


@dataclass(frozen=True)
class LibrarySize:
    domains: int
    predicates: int
    by_type: dict[str, int] = field(default_factory=dict)
    by_cardinality: dict[str, int] = field(default_factory=dict)
    by_scope: dict[str, int] = field(default_factory=dict)
    people: int = 0
    cities: int = 0


def library_size() -> LibrarySize:
    def count(key) -> dict[str, int]:
        result: dict[str, int] = {}
        for p in PREDICATES:
            result[key(p)] = result.get(key(p), 0) + 1
        return result

    return LibrarySize(
        domains=len(DOMAINS),
        predicates=len(PREDICATES),
        by_type=count(lambda p: p.type),
        by_cardinality=count(lambda p: p.cardinality),
        by_scope=count(lambda p: p.scope),
        people=len(PEOPLE),
        cities=len(CITIES),
    )
