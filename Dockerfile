# perfgate for container agents, from this checkout.
#
#   docker build -t perfgate .
#       Debian 12 slim with perfgate on PATH (/opt/perfgate/bin/perfgate):
#       for report, gate and merge steps, the mock server, a laptop.
#   docker build --target bundle --output dist .
#       only the bundle, dist/perfgate.tar.gz: the `binary-artifact` of
#       docs/pipelines.md, or a release download.
#
# Into an image of your own (vLLM's, a CUDA one), for GPU steps that set
# `binary: /opt/perfgate/bin/perfgate`:
#
#   COPY --from=perfgate /opt/perfgate /opt/perfgate
#
# The bundle carries every shared library perfgate needs but glibc's, so
# that image needs glibc 2.35 or newer (Ubuntu 22.04, Debian 12) and
# nothing else (scripts/bundle, plugin/lib.bash).
FROM debian:12 AS build
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        build-essential cmake pkg-config ca-certificates \
        libcurl4-openssl-dev libjansson-dev libyaml-dev libgit2-dev libssl-dev \
    && rm -rf /var/lib/apt/lists/*
COPY . /src
WORKDIR /src
RUN PERFGATE_BUNDLE_BUILD=/tmp/build scripts/bundle /out/perfgate.tar.gz \
    && mkdir -p /opt && tar -xzf /out/perfgate.tar.gz -C /opt \
    && /opt/perfgate/bin/perfgate --version

FROM scratch AS bundle
COPY --from=build /out/perfgate.tar.gz /perfgate.tar.gz

FROM debian:12-slim
# CA certificates for a history repository over HTTPS (baseline: git)
RUN apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
        ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /opt/perfgate /opt/perfgate
RUN ln -s /opt/perfgate/bin/perfgate /usr/local/bin/perfgate && perfgate --version
CMD ["perfgate", "--help"]
