"""The sentences of `small`'s governance story: `place/data/generator/governance.yaml`, validated.

The permissions the principal grants, the actions (tasks) that need them, and the templates
of every governance turn (share, unshare, grant, revoke, requests, runs, rollbacks and the
assistant's replies). As for `phrasing.yaml`, each kind of template may use only its own
placeholders; a template with any other is a load error naming the file and key.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from pydantic import AfterValidator, Field, StringConstraints

from place.generate.datafile import Check, DataModel, Placeholders, load


def _template(*allowed: str) -> AfterValidator:
    # Every placeholder a kind allows is also one it needs: a sentence that leaves out the
    # slot, the person or the permission would not say what the turn does.
    return AfterValidator(Placeholders(allowed, allowed))


Plain = Annotated[str, StringConstraints(min_length=1), _template()]
Sharing = Annotated[str, _template("noun", "name")]
Granting = Annotated[str, _template("name", "permission")]
Asking = Annotated[str, _template("name", "action")]
Running = Annotated[str, _template("name")]
Undoing = Annotated[str, _template("undo")]
UndoingAsker = Annotated[str, _template("name", "undo")]
Request = Annotated[str, _template("poss", "noun")]
PermissionId = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$")]
ActionId = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z-]*$")]


class Action(DataModel):
    """A task that reads one slot and needs the permission it is listed under."""

    id: ActionId
    """The task's `action` ("add-to-planner")."""
    request: Request
    """What is asked, after "please": {poss} (the slot owner, possessive) and {noun}."""
    undo: Plain
    """What a rollback of the task undoes ("the new planner entry")."""


class Permission(DataModel):
    """A permission of `schema.permissions`, owned by the principal."""

    id: PermissionId
    name: Plain
    """How people call it ("the family planner")."""
    actions: tuple[Action, ...] = Field(min_length=1)


class Replies(DataModel):
    """The assistant's turn after a request, a deferred request and a run."""

    request: tuple[Plain, ...] = Field(min_length=1)
    defer: tuple[Plain, ...] = Field(min_length=1)
    run: tuple[Plain, ...] = Field(min_length=1)


class GovernanceText(DataModel):
    """governance.yaml."""

    permissions: tuple[Permission, ...] = Field(min_length=1)
    share: tuple[Sharing, ...] = Field(min_length=1)
    unshare: tuple[Sharing, ...] = Field(min_length=1)
    grant: tuple[Granting, ...] = Field(min_length=1)
    revoke: tuple[Granting, ...] = Field(min_length=1)
    request: tuple[Asking, ...] = Field(min_length=1)
    """The second principal asks for a task at once."""
    defer: tuple[Asking, ...] = Field(min_length=1)
    """The second principal asks for a task that waits for their go-ahead."""
    run: tuple[Running, ...] = Field(min_length=1)
    """The second principal's go-ahead for the deferred task."""
    rollback: tuple[Undoing, ...] = Field(min_length=1)
    """The principal (the permission's owner) rolls back a task."""
    rollback_by_asker: tuple[UndoingAsker, ...] = Field(min_length=1)
    """The second principal (the task's asker) rolls it back."""
    replies: Replies


def check_governance(text: GovernanceText) -> Iterator[Check]:
    seen: set[str] = set()
    for i, permission in enumerate(text.permissions):
        if permission.id in seen:
            yield ("permissions", i, "id"), f"permission {permission.id!r} is listed twice"
        seen.add(permission.id)
    actions = [
        (i, j, a.id) for i, p in enumerate(text.permissions) for j, a in enumerate(p.actions)
    ]
    for n, (i, j, ident) in enumerate(actions):
        if ident in [a for _i, _j, a in actions[:n]]:
            yield ("permissions", i, "actions", j, "id"), f"action {ident!r} is listed twice"


GOVERNANCE: GovernanceText = load("governance.yaml", GovernanceText, check_governance)
