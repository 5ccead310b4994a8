"""Eval runs kept in the store with an id (`assistant eval runs`, `eval rescore ID`, `eval
diff ID_A ID_B`): a run, its cases and its results, as a saved run's directory holds them.
And live answers judged (ASSISTANT_JUDGE_SAMPLE): one verdict per answer, a side record of
the thread.

Revision ID: 0023_eval_runs
Revises: 0022_grants
Create Date: 2026-11-29
"""

import sqlalchemy as sa
from alembic import op

revision = "0023_eval_runs"
down_revision = "0022_grants"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "eval_runs",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("created_at", sa.String, nullable=False),
        sa.Column("label", sa.Text, nullable=False),
        sa.Column("manifest", sa.Text),
    )
    op.create_table(
        "eval_run_logs",
        sa.Column(
            "run_id",
            sa.Integer,
            sa.ForeignKey("eval_runs.id", name="fk_eval_run_logs_run"),
            nullable=False,
        ),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("document", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "number", name="pk_eval_run_logs"),
    )
    op.create_table(
        "eval_run_results",
        sa.Column(
            "run_id",
            sa.Integer,
            sa.ForeignKey("eval_runs.id", name="fk_eval_run_results_run"),
            nullable=False,
        ),
        sa.Column("config", sa.Integer, nullable=False),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("result", sa.Text, nullable=False),
        sa.PrimaryKeyConstraint("run_id", "config", "number", name="pk_eval_run_results"),
    )
    op.create_table(
        "judged_answers",
        sa.Column(
            "thread_id",
            sa.Integer,
            sa.ForeignKey("threads.id", name="fk_judged_answers_thread"),
            nullable=False,
        ),
        sa.Column("answer_idx", sa.Integer, nullable=False),
        sa.Column("judged_at", sa.String, nullable=False),
        sa.Column("model", sa.String),
        sa.Column("judge_model", sa.String, nullable=False),
        sa.Column("verdict", sa.String),
        sa.Column("reason", sa.Text),
        sa.Column("latency_ms", sa.Integer),
        sa.Column("prompt_tokens", sa.Integer),
        sa.Column("cached_tokens", sa.Integer),
        sa.Column("completion_tokens", sa.Integer),
        sa.PrimaryKeyConstraint("thread_id", "answer_idx", name="pk_judged_answers"),
    )


def downgrade() -> None:
    op.drop_table("judged_answers")
    op.drop_table("eval_run_results")
    op.drop_table("eval_run_logs")
    op.drop_table("eval_runs")
