# The app's image: `assistant serve` by default; `serve --runs off` (the ingress) and `worker`
# are the same image with another command (deploy/compose.yaml, docs/deployment.md).
#
#   docker build -t aya .
#   docker build -t aya --build-arg EXTRAS=grpc .   # OTEL_EXPORTER_OTLP_PROTOCOL=grpc
#
# tests/project/test_deployment.py checks this file against the app (commands, port, health
# path, copied files, extras); CI cannot build it (no image registry here: docs/deployment.md).
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
FROM ${PYTHON_IMAGE}

ARG EXTRAS=""
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    VIRTUAL_ENV=/opt/venv \
    PATH=/opt/venv/bin:$PATH

RUN useradd --system --uid 10001 --user-group --home-dir /app --no-create-home aya \
    && python -m venv /opt/venv \
    && mkdir /data && chown aya:aya /data

# The source is copied to /app and installed from there (manifest.yml, the bot scopes an OAuth
# install asks for, is package data under assistant/).
WORKDIR /app
COPY pyproject.toml README.md requirements.lock ./
COPY context ./context
COPY assistant ./assistant
# The versions requirements.lock pins (a constraint, so the dev extra's tools stay out).
RUN pip install -c requirements.lock ".${EXTRAS:+[$EXTRAS]}"

USER aya
# SQLite by default, on the volume; set DATABASE_URL=postgresql://… for several processes.
ENV DATABASE_URL=sqlite:////data/assistant.db \
    PORT=3000
VOLUME ["/data"]
EXPOSE 3000

# GET /healthz (assistant/serving/http.py): 200 when the store can be read and written, else 503
# within 5 s. Only `serve` answers it: a worker serves no HTTP, so compose turns it off there.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:' + os.environ.get('PORT', '3000') + '/healthz', timeout=8)"]

# SIGTERM stops `serve` and `worker` within 10 s, exit 0 (runs under way get 3 s, then are
# left owed for the next process): give containers a stop timeout above that.
STOPSIGNAL SIGTERM
ENTRYPOINT ["assistant"]
CMD ["serve"]
