#!/usr/bin/env python3
"""Builds test images for --image without any container engine.

image_make.py KIND OUT [--oci]
  KIND: base      busybox layer, then a layer with a whiteout, an opaque
                  directory and a hard link
        hostile   base + a layer with device nodes, a fifo, setuid and
                  setgid files (to be neutralized)
        dotdot | absolute | linkout | through | hardout
                  base + a layer that tries one path escape (to be refused)
        hostlinks base + a layer whose usr and etc are absolute links to host
                  directories ($LINK_USR, $LINK_ETC), to be resolved inside
                  the image, never on the host
        innerlinks base + a layer whose usr and etc link to /opt/usr and
                  /opt/etc of the image itself (the control: links work)
        forged    base's config and diff_ids, but the lower layer's content
                  is another's (the cache must not take it as base's layer)
        forgedcfg other layers, truthfully described by a config that is
                  stored under base's config digest
        bomb      base + a small gzip layer that unpacks to 24 MiB of zeros
        big       base + an uncompressed layer of $BIG_MB MiB (default 64) of
                  random bytes (the digest benchmark, tests/bench/image.c)
        esc       base with escape sequences in its User and WorkingDir
        plain     base with no User or WorkingDir (nothing to note on stderr:
                  the whole-process benchmarks)
        escname   base + a layer refused for an entry whose name holds an
                  escape sequence
  OUT: a `docker save` tarball, or with --oci an OCI layout directory;
  --links: the old `docker save` layout (ID/layer.tar, ID.json), the base
  layer reached through a symbolic link member as docker writes for a
  layer met twice.
"""
import gzip
import hashlib
import io
import json
import os
import sys
import tarfile

BUSYBOX = "/bin/busybox"
APPLETS = ["sh", "ls", "cat", "id", "env", "stat", "echo", "test", "find", "touch", "mknod",
           "printf", "true", "ln", "readlink", "wc"]


def info(name, kind=tarfile.REGTYPE, mode=0o644, data=b"", link=""):
    ti = tarfile.TarInfo(name)
    ti.type = kind
    ti.mode = mode
    ti.uid = ti.gid = 0
    ti.mtime = 1700000000
    ti.linkname = link
    ti.size = len(data) if kind == tarfile.REGTYPE else 0
    return ti, (io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def layer(entries):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as t:
        for e in entries:
            ti, f = info(e[0], **e[1])
            t.addfile(ti, f)
    return buf.getvalue()


def base_layer():
    bb = open(BUSYBOX, "rb").read()
    ents = [("bin", {"kind": tarfile.DIRTYPE, "mode": 0o755}),
            ("bin/busybox", {"mode": 0o755, "data": bb}),
            ("bin/image-marker", {"data": b"from the image\n"}),
            # proctor's bash tool runs `bash -c`; busybox has no bash applet
            ("bin/bash", {"mode": 0o755, "data": b'#!/bin/sh\nexec /bin/sh "$@"\n'}),
            ("etc", {"kind": tarfile.DIRTYPE, "mode": 0o755}),
            ("etc/os-release", {"data": b"ID=proctor-test-image\nNAME=busybox\n"}),
            ("etc/profile", {"data": b"# lower\n"}),
            ("opq", {"kind": tarfile.DIRTYPE, "mode": 0o755}),
            ("opq/old", {"data": b"lower\n"}),
            ("bin/gone", {"data": b"whited out\n"})]
    for a in APPLETS:
        ents.append(("bin/" + a, {"kind": tarfile.SYMTYPE, "link": "busybox"}))
    return layer(ents)


def upper_layer():
    return layer([("bin/.wh.gone", {}),
                  ("opq/.wh..wh..opq", {}),
                  ("opq/new", {"data": b"upper\n"}),
                  ("opq/samefile", {"kind": tarfile.LNKTYPE, "link": "opq/new"}),
                  ("etc/profile", {"data": b"# upper\n"})])


def hostile_layer(kind):
    if kind == "hostile":
        return layer([("bin/evil-chr", {"kind": tarfile.CHRTYPE, "mode": 0o666}),
                      ("bin/evil-blk", {"kind": tarfile.BLKTYPE, "mode": 0o666}),
                      ("bin/evil-fifo", {"kind": tarfile.FIFOTYPE, "mode": 0o666}),
                      ("bin/suid", {"mode": 0o4755, "data": b"#!/bin/sh\nid\n"}),
                      ("bin/sgid", {"mode": 0o2755, "data": b"#!/bin/sh\nid\n"}),
                      ("bin/sticky", {"kind": tarfile.DIRTYPE, "mode": 0o1777})])
    if kind == "dotdot":
        return layer([("bin/../../escape-dotdot", {"data": b"escaped\n"})])
    if kind == "absolute":
        return layer([("/tmp/proctor-escape-absolute", {"data": b"escaped\n"})])
    if kind == "linkout":
        return layer([("bin/up", {"kind": tarfile.SYMTYPE, "link": "../../../../.."})])
    if kind == "through":
        out = os.environ.get("ESCAPE_DIR", "/tmp")
        return layer([("bin/out", {"kind": tarfile.SYMTYPE, "link": out}),
                      ("bin/out/escape-through", {"data": b"escaped\n"})])
    if kind == "hardout":
        return layer([("bin/hard", {"kind": tarfile.LNKTYPE, "link": "../../etc/passwd"})])
    if kind == "hostlinks":
        return layer([("usr", {"kind": tarfile.SYMTYPE, "link": os.environ["LINK_USR"]}),
                      ("etc", {"kind": tarfile.SYMTYPE, "link": os.environ["LINK_ETC"]}),
                      ("srv", {"kind": tarfile.SYMTYPE, "link": os.environ["LINK_USR"]})])
    if kind == "innerlinks":
        return layer([("opt", {"kind": tarfile.DIRTYPE, "mode": 0o755}),
                      ("opt/usr", {"kind": tarfile.DIRTYPE, "mode": 0o755}),
                      ("opt/usr/inside-marker", {"data": b"usr from inside the image\n"}),
                      ("opt/etc", {"kind": tarfile.DIRTYPE, "mode": 0o755}),
                      ("opt/etc/os-release", {"data": b"ID=inner-links\n"}),
                      ("usr", {"kind": tarfile.SYMTYPE, "link": "/opt/usr"}),
                      ("etc", {"kind": tarfile.SYMTYPE, "link": "/opt/../opt/etc"})])
    if kind == "big":
        return layer([("big", {"data": os.urandom(int(os.environ.get("BIG_MB", "64")) << 20)})])
    if kind == "bomb":
        return layer([("big", {"data": bytes(24 << 20)})])
    if kind == "escname":
        return layer([("bin/../../\x1b[2J\x1b]0;owned\x07esc-escape", {"data": b"escaped\n"})])
    raise SystemExit("unknown kind " + kind)


def sha(b):
    return hashlib.sha256(b).hexdigest()


def config_of(raw, workdir="/srv/app", user="1000:1000", var="from-image"):
    return json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/bin:/image-path", "IMAGE_VAR=" + var, "HOME=/root"],
                   "WorkingDir": workdir, "User": user},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + sha(r) for r in raw]},
    }).encode()


def forged_base_layer():
    """base's layer with another marker: what an attacker would pass off."""
    return base_layer().replace(b"from the image\n", b"forged content\n")


def main():
    kind, out = sys.argv[1], sys.argv[2]
    oci = "--oci" in sys.argv
    raw = [base_layer(), upper_layer()]
    if kind in ("forged", "forgedcfg"):
        raw = [forged_base_layer(), upper_layer()]
    elif kind not in ("base", "esc", "plain"):
        raw.append(hostile_layer(kind))
    # the second layer is stored gzip-compressed, as registries ship them
    stored = [raw[0], gzip.compress(raw[1], mtime=0)] + raw[2:]
    if kind == "bomb":
        stored[2] = gzip.compress(raw[2], mtime=0)
    config = config_of(raw)
    config_name = sha(config)
    if kind == "forged":  # claims base's diff_ids: the same config as base
        config = config_of([base_layer(), upper_layer()])
        config_name = sha(config)
    if kind == "forgedcfg":  # its own layers, stored under base's config digest
        config = config_of(raw, var="forged")
        config_name = sha(config_of([base_layer(), upper_layer()]))
    if kind == "esc":
        config = config_of(raw, workdir="/srv/\x1b]0;owned\x07app", user="\x1b[31mevil")
        config_name = sha(config)
    if kind == "plain":
        config = config_of(raw, workdir="", user="")
        config_name = sha(config)
    blobs = {config_name: config}
    for s in stored:
        blobs[sha(s)] = s
    if "--links" in sys.argv:
        members = {config_name + ".json": config}
        names = []
        for i, s in enumerate(stored):
            members["%064x/layer.tar" % (i + 1)] = s
            names.append("%064x/layer.tar" % (i + 1))
        names[0] = "%064x/layer.tar" % 99
        manifest = [{"Config": config_name + ".json", "RepoTags": ["test:" + kind],
                     "Layers": names}]
        members["manifest.json"] = json.dumps(manifest).encode()
        with tarfile.open(out, "w") as t:
            t.addfile(*info(names[0], kind=tarfile.SYMTYPE, link="../%064x/layer.tar" % 1))
            for name, data in members.items():
                t.addfile(*info(name, data=data))
        return
    if not oci:
        members = {"blobs/sha256/" + h: b for h, b in blobs.items()}
        manifest = [{"Config": "blobs/sha256/" + config_name, "RepoTags": ["test:" + kind],
                     "Layers": ["blobs/sha256/" + sha(s) for s in stored]}]
        members["manifest.json"] = json.dumps(manifest).encode()
        with tarfile.open(out, "w") as t:
            for name, data in members.items():
                ti, f = info(name, data=data)
                t.addfile(ti, f)
        return
    man = json.dumps({
        "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": "sha256:" + config_name, "size": len(config)},
        "layers": [{"mediaType": "application/vnd.oci.image.layer.v1.tar" +
                    ("+gzip" if s[:2] == b"\x1f\x8b" else ""),
                    "digest": "sha256:" + sha(s), "size": len(s)} for s in stored],
    }).encode()
    blobs[sha(man)] = man
    os.makedirs(out + "/blobs/sha256", exist_ok=True)
    for h, b in blobs.items():
        open(out + "/blobs/sha256/" + h, "wb").write(b)
    open(out + "/oci-layout", "w").write('{"imageLayoutVersion": "1.0.0"}')
    idx = {"schemaVersion": 2, "manifests": [{
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "digest": "sha256:" + sha(man), "size": len(man)}]}
    open(out + "/index.json", "w").write(json.dumps(idx))


main()
