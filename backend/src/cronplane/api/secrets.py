# mypy: disable-error-code="untyped-decorator"
"""The names of the secrets a payload may reference as ``{"$secret": "NAME"}``."""

from __future__ import annotations

from typing import Any

import marshmallow as ma
from flask.views import MethodView
from marshmallow import fields

from cronplane.api.access import requires
from cronplane.api.context import management_context
from cronplane.api.schemas_common import ApiBlueprint
from cronplane.domain.roles import Role
from cronplane.management.secrets import secret_names

blp = ApiBlueprint("secrets", __name__,
                   description="Secret names for payload references (never their values).")


class SecretNamesSchema(ma.Schema):
    names = fields.List(fields.String(), required=True, metadata={
        "description": "Sorted; each usable as {\"$secret\": NAME} in a payload"})


@blp.route("/secrets")
class SecretNames(MethodView):
    @requires(Role.OPERATOR)
    @blp.doc(operationId="listSecretNames",
             summary="The names of the secrets this server can resolve (names only)")
    @blp.response(200, SecretNamesSchema)
    def get(self) -> dict[str, Any]:
        return {"names": secret_names(management_context())}
