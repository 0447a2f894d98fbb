#!/bin/sh
# Build the nvme-cli releases whose output tests/golden/telemetry/real/ records, each into
# /opt/nvme-cli/<version>/sbin/nvme (never over Debian's /usr/sbin/nvme).
#
#   tests/nvme_shim/build_nvme_cli.sh NVME_CLI_GIT LIBNVME_GIT [VERSION...]
#
# NVME_CLI_GIT and LIBNVME_GIT are git directories (clones or mirrors) of nvme-cli and libnvme.
# nvme-cli 1.x is a plain Makefile build with its own JSON printer.  nvme-cli 2.x is built with
# meson, libnvme of the matching release put in as a subproject and linked statically, so each
# binary carries its own libnvme and Debian's libnvme1 is not touched.  Optional pieces that the
# recorded commands do not use (OpenSSL, keyutils, Python bindings, docs, tests) are off.
# Needs: gcc, make, meson, ninja, pkg-config, libjson-c-dev, uuid-dev, zlib1g-dev.
set -eu
NVME_CLI_GIT=$1
LIBNVME_GIT=$2
shift 2
[ $# -gt 0 ] || set -- 1.16 1.16-nojsonc 2.0 2.6 2.10 2.11
PREFIX_ROOT=${PREFIX_ROOT:-/opt/nvme-cli}
WORK=${WORK:-/tmp/nvme-cli-build}
mkdir -p "$WORK"

# nvme-cli release -> the libnvme release it was made with
libnvme_for() {
    case $1 in
        2.0) echo v1.0 ;;
        2.*) echo "v1.${1#2.}" ;;
    esac
}

for ver in "$@"; do
    src=$WORK/nvme-cli-$ver
    dest=$PREFIX_ROOT/$ver
    rm -rf "$src"
    mkdir -p "$src" "$dest/sbin"
    tag=v${ver%%-*}  # 1.16-nojsonc is v1.16 built another way
    git -C "$NVME_CLI_GIT" archive "$tag" | tar -x -C "$src"
    commit=$(git -C "$NVME_CLI_GIT" rev-parse "$tag^{commit}")
    case $ver in
    1.*)
        # the tree has no .git, so NVME-VERSION-GEN would fall back to its default; say it
        echo "$tag" > "$src/version"
        # 1.x links json-c when pkg-config finds json-c >= 0.14 and prints JSON with it;
        # without, it has a printer of its own ("key" : value).  -nojsonc forces the latter.
        jsonc=
        case $ver in *-nojsonc) jsonc=LIBJSONC=1 ;; esac
        # its Makefile's -Werror predates the warnings of today's gcc
        make -C "$src" -j"$(nproc)" CFLAGS="-O2 -g -Wall" $jsonc nvme >"$src/build.log" 2>&1 \
            || { tail -40 "$src/build.log"; exit 1; }
        install -m 0755 "$src/nvme" "$dest/sbin/nvme"
        printf 'nvme-cli %s %s (make%s)\n' "$tag" "$commit" "${jsonc:+ $jsonc}" > "$dest/BUILD-INFO"
        ;;
    2.*)
        lib=$(libnvme_for "$ver")
        mkdir -p "$src/subprojects/libnvme"
        git -C "$LIBNVME_GIT" archive "$lib" | tar -x -C "$src/subprojects/libnvme"
        libcommit=$(git -C "$LIBNVME_GIT" rev-parse "$lib^{commit}")
        case $lib in
            v1.0) libopts="-Dlibnvme:python=false -Dlibnvme:openssl=disabled" ;;
            *) libopts="-Dlibnvme:python=disabled -Dlibnvme:openssl=disabled -Dlibnvme:keyutils=disabled" ;;
        esac
        case $lib in v1.1[0-9]) libopts="$libopts -Dlibnvme:tests=false" ;; esac
        # shellcheck disable=SC2086
        (cd "$src" && meson setup build --prefix="$dest" --buildtype=release \
            --default-library=static --force-fallback-for=libnvme,libnvme-mi \
            --wrap-mode=nodownload $libopts >"$src/build.log" 2>&1 \
            && ninja -C build nvme >>"$src/build.log" 2>&1) \
            || { tail -40 "$src/build.log"; exit 1; }
        install -m 0755 "$src/build/nvme" "$dest/sbin/nvme"
        printf 'nvme-cli %s %s (meson)\nlibnvme %s %s (static)\n' "$tag" "$commit" "$lib" "$libcommit" \
            > "$dest/BUILD-INFO"
        ;;
    esac
    echo "built $dest/sbin/nvme: $("$dest/sbin/nvme" version | tr '\n' ' ')"
done
