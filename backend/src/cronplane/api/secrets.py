# mypy: disable-error-code="untyped-decorator"
"""The names of the secrets a payload may reference as ``{"$secret": "NAME"}``."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask.views import MethodView
from marshmallow import fields

from cronplane.api.access import current_actor, requires
from cronplane.api.context import management_context
from cronplane.api.parsing import ApiBlueprint
from cronplane.domain.roles import Role
from cronplane.management.secrets import secret_names

blp = ApiBlueprint("secrets", __name__,
                   description="Secret names for payload references (never their values).")


class SecretNamesSchema(ma.Schema):
    names = fields.List(fields.String(), required=True, metadata={
        "description": "Sorted; each usable as {\"$secret\": NAME} in a payload"})


class SecretNamesArgs(ma.Schema):
    project = fields.String(load_default=None, metadata={
        "description": "The project whose secrets to list (default: default)"})


@blp.route("/secrets")
class SecretNames(MethodView):
    @requires(Role.OPERATOR)
    @blp.doc(operationId="listSecretNames",
             summary="The names of one project's secrets (names only; OPERATOR of the project)")
    @blp.arguments(SecretNamesArgs, location="query")
    @blp.response(200, SecretNamesSchema)
    def get(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"names": secret_names(management_context(), current_actor(), args["project"])}
