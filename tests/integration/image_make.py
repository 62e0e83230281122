#!/usr/bin/env python3
"""Builds test images for --image without any container engine.

image_make.py KIND OUT [--oci]
  KIND: base      busybox layer, then a layer with a whiteout, an opaque
                  directory and a hard link
        hostile   base + a layer with device nodes, a fifo, setuid and
                  setgid files (to be neutralized)
        dotdot | absolute | linkout | through | hardout
                  base + a layer that tries one path escape (to be refused)
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
    raise SystemExit("unknown kind " + kind)


def sha(b):
    return hashlib.sha256(b).hexdigest()


def main():
    kind, out = sys.argv[1], sys.argv[2]
    oci = "--oci" in sys.argv
    raw = [base_layer(), upper_layer()]
    if kind != "base":
        raw.append(hostile_layer(kind))
    # the second layer is stored gzip-compressed, as registries ship them
    stored = [raw[0], gzip.compress(raw[1], mtime=0)] + raw[2:]
    config = json.dumps({
        "architecture": "amd64", "os": "linux",
        "config": {"Env": ["PATH=/bin:/image-path", "IMAGE_VAR=from-image", "HOME=/root"],
                   "WorkingDir": "/srv/app", "User": "1000:1000"},
        "rootfs": {"type": "layers", "diff_ids": ["sha256:" + sha(r) for r in raw]},
    }).encode()
    blobs = {sha(config): config}
    for s in stored:
        blobs[sha(s)] = s
    if "--links" in sys.argv:
        members = {sha(config) + ".json": config}
        names = []
        for i, s in enumerate(stored):
            members["%064x/layer.tar" % (i + 1)] = s
            names.append("%064x/layer.tar" % (i + 1))
        names[0] = "%064x/layer.tar" % 99
        manifest = [{"Config": sha(config) + ".json", "RepoTags": ["test:" + kind],
                     "Layers": names}]
        members["manifest.json"] = json.dumps(manifest).encode()
        with tarfile.open(out, "w") as t:
            t.addfile(*info(names[0], kind=tarfile.SYMTYPE, link="../%064x/layer.tar" % 1))
            for name, data in members.items():
                t.addfile(*info(name, data=data))
        return
    if not oci:
        members = {"blobs/sha256/" + h: b for h, b in blobs.items()}
        manifest = [{"Config": "blobs/sha256/" + sha(config), "RepoTags": ["test:" + kind],
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
                   "digest": "sha256:" + sha(config), "size": len(config)},
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
