# syntax=docker/dockerfile:1

FROM golang:1.26 AS build
WORKDIR /src
# The module graph also holds the lint tools; go build fetches only what the
# binary needs, and the cache mounts keep it between builds.
COPY . .
ARG VERSION=dev
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 go build -trimpath -buildvcs=false \
        -ldflags "-s -w -X main.version=${VERSION}" \
        -o /out/lmosdir ./cmd/lmosdir

# static: the binary needs no libc (CGO_ENABLED=0); the image brings CA
# certificates, tzdata and the unprivileged user nonroot (65532).
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/lmosdir /usr/local/bin/lmosdir
USER nonroot:nonroot
WORKDIR /home/nonroot
# The embedded store, used when LMOSDIR_DATABASE_URL is not set.
ENV LMOSDIR_DATA_DIR=/home/nonroot/data
VOLUME /home/nonroot/data
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/lmosdir"]
CMD ["serve"]
