# A local base image for docker/Dockerfile where no registry is reachable:
# what distroless/static's nonroot tag holds that the router uses, taken
# from the build host. The build context is a directory holding
#
#   ca-certificates.crt  (the host's /etc/ssl/certs/ca-certificates.crt)
#   zoneinfo/            (the host's /usr/share/zoneinfo)
#   passwd, group        (root and nonroot, uid and gid 65532)
#
# as TestImage (docker/image_test.go) lays it out:
#
#   docker build -f docker/base.Dockerfile -t binlog-router-base <dir>
#   docker build -f docker/Dockerfile --target prebuilt --build-arg BASE=binlog-router-base -t binlog-router <dir with bin/binlog-router>

FROM scratch
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY zoneinfo /usr/share/zoneinfo
COPY passwd /etc/passwd
COPY group /etc/group
USER 65532:65532
