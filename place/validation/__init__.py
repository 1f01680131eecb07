"""Human validation of Ω, the outcome of an answer (docs/validation.md, issue 43).

Ω (`place.lexicon.outcome.outcome`) is a rule over surface patterns, and every answer score
rests on it; how far it can be trusted is an empirical question that only people reading the
answers can settle. `export` draws a reproducible sample of the recorded answers into a CSV
for labellers, with Ω as the package computes it now; `agree` measures how well Ω and the
labellers agree (exact agreement, Cohen's kappa, a confusion table, the disagreements).
"""
