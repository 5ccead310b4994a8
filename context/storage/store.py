"""The whole store over SQL: every concern's repository, over one `Database`."""

from __future__ import annotations

import copy

from sqlalchemy.engine import URL, Engine

from context.storage.channels import SqlChannels
from context.storage.copies import SqlMessageCopies
from context.storage.elicitations import SqlElicitations
from context.storage.engine import Database
from context.storage.eval_runs import SqlEvalRuns
from context.storage.grants import SqlGrants
from context.storage.housekeeping import SqlHousekeeping
from context.storage.images import SqlImages
from context.storage.log import SqlLog
from context.storage.mcp_connections import SqlMcpConnections
from context.storage.memory import SqlMemory
from context.storage.model_refusals import SqlModelRefusals
from context.storage.panel import SqlPanel
from context.storage.routines import SqlRoutines
from context.storage.runs import SqlRuns
from context.storage.spend import SqlSpend
from context.storage.stops import SqlStops
from context.storage.verdicts import SqlVerdicts


class SqlStore(
    SqlLog,
    SqlRuns,
    SqlMessageCopies,
    SqlImages,
    SqlPanel,
    SqlChannels,
    SqlModelRefusals,
    SqlGrants,
    SqlElicitations,
    SqlHousekeeping,
    SqlStops,
    SqlSpend,
    SqlMcpConnections,
    SqlEvalRuns,
    SqlVerdicts,
    SqlRoutines,
    SqlMemory,
):
    """`Store` over SQLAlchemy Core; the schema is migrated to head when it opens.

    The repositories keep no state but the `Database` they share, and no two define the same
    name (tests/context/test_storage_layout.py checks it), so combining them adds nothing to any."""

    def __init__(self, url: str | URL) -> None:
        super().__init__(Database.open(url))

    @property
    def local_reads(self) -> bool:
        return self._db.local_reads

    def urgent(self) -> SqlStore:
        """This store, its writes served first: for whoever has someone waiting (Slack,
        for the acknowledgement of an event). Same database, same connections."""
        view = copy.copy(self)
        view._db = self._db.served_first()
        return view

    def oauth_engine(self) -> Engine:
        return self._db.writes

    def close(self) -> None:
        self._db.close()
