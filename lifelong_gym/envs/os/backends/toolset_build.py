"""Build the judge's toolset: a relocated copy of the image's /usr, reading nothing of the agent's.

Run by the image's own python3 in a fresh container (never one an agent used), with the
toolset volume mounted read-write at ROOT (`python3 -c "$(cat toolset_build.py)"`); the
standard library only. Every ELF program's interpreter is the toolset's own loader, a copy
of ld.so whose file names are patched (same lengths) so that it reads no `/etc/ld.so.preload`,
takes libraries from the toolset's own cache and, failing that, from toolset folders, never
from the container's /lib or /usr/lib. Absolute symbolic links point into the toolset, and
links through /etc (alternatives, Python's sitecustomize) are resolved here, in the pristine
image. The file READY is written last.
"""

import os
import shutil
import struct
import subprocess
import sys

ROOT = "/.lgj"
LOADER = ROOT + "/ld.so"
READY = ROOT + "/ready"
EMPTY = ROOT + "/empty"  # the judge's standard input: the agent may replace /dev/null
MANIFEST = ROOT + "/agent-programs"
IMAGE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PT_INTERP, PT_GNU_STACK = 3, 0x6474E551
MULTIARCH = "/usr/lib/x86_64-linux-gnu"
DROPPED = ("share/doc", "share/man", "share/info", "share/locale")
# Same-length replacements in the loader, longest first: the preload file becomes a path
# under the read-only /sys that cannot exist; the cache and default folders are the
# toolset's. A name may follow another string directly, so only its end is anchored.
LOADER_PATHS = (
    (b"/etc/ld.so.preload", b"/sys/no/ld.preload"),
    (b"/etc/ld.so.cache", ROOT.encode() + b"/ldso.cache"),
    (b"/usr/lib/x86_64-linux-gnu/", ROOT.encode() + b"/" + b"b" * 19 + b"/"),
    (b"/lib/x86_64-linux-gnu/", ROOT.encode() + b"/" + b"a" * 15 + b"/"),
    (b"\0/usr/lib/", b"\0" + ROOT.encode() + b"/cc/"),
    (b"\0/lib/", b"\0/sys/"),
)
FOLDER_LINKS = {"a" * 15: "usr/lib/x86_64-linux-gnu", "b" * 19: "usr/lib/x86_64-linux-gnu",
                "cc": "usr/lib", "bin": "usr/bin", "sbin": "usr/sbin"}  # fmt: skip
MERGED = {
    "/bin/": "/usr/bin/",
    "/sbin/": "/usr/sbin/",
    "/lib/": "/usr/lib/",
    "/lib64/": "/usr/lib64/",
}


def patch_loader(source: str) -> None:
    """Copy ld.so to LOADER with LOADER_PATHS replaced, and make it refuse to run as a program.

    Run as a program, ld.so loads any file it is given (`ld.so /usr/bin/python3`), which
    would let a restricted agent run programs it may not execute. Its GNU_STACK header
    becomes an empty PT_INTERP: the kernel refuses to execute it (ENOEXEC), while as the
    interpreter of a program its headers other than PT_LOAD are not read, by the kernel or
    by ld.so itself.
    """
    data = bytearray(open(source, "rb").read())
    for old, new in LOADER_PATHS:
        assert len(old) == len(new), (old, new)
        data = data.replace(old + b"\0", new + b"\0")
    (phoff,) = struct.unpack_from("<Q", data, 32)
    phentsize, phnum = struct.unpack_from("<HH", data, 54)
    for number in range(phnum):
        if struct.unpack_from("<I", data, phoff + number * phentsize)[0] == PT_GNU_STACK:
            struct.pack_into("<I", data, phoff + number * phentsize, PT_INTERP)
    with open(LOADER, "wb") as out:
        out.write(data)
    os.chmod(LOADER, 0o755)


def set_interpreter(path: str) -> None:
    """Point an ELF file's PT_INTERP at LOADER, in place (the new name is shorter), keeping
    its times (a restricted agent lists these copies in place of the image's programs)."""
    times = os.stat(path)
    with open(path, "r+b") as elf:
        head = elf.read(64)
        if head[:4] != b"\x7fELF" or head[4] != 2:  # 64-bit ELF only (this image)
            return
        (phoff,) = struct.unpack_from("<Q", head, 32)
        phentsize, phnum = struct.unpack_from("<HH", head, 54)
        for number in range(phnum):
            elf.seek(phoff + number * phentsize)
            kind, _, offset, _, _, size = struct.unpack("<IIQQQQ", elf.read(40))
            if kind == PT_INTERP:
                name = LOADER.encode() + b"\0"
                if len(name) <= size:
                    elf.seek(offset)
                    elf.write(name + b"\0" * (size - len(name)))
                break
    os.utime(path, ns=(times.st_atime_ns, times.st_mtime_ns))


def relink(path: str) -> None:
    """Point an absolute symbolic link into the toolset, resolving links through /etc."""
    target = os.readlink(path)
    if not target.startswith("/"):
        return
    original = "/" + os.path.relpath(path, ROOT)
    if target.startswith("/etc/"):
        resolved = os.path.realpath(original)  # the pristine image's own answer
        os.unlink(path)
        if resolved.startswith("/usr/"):
            os.symlink(ROOT + resolved, path)
        elif os.path.isfile(resolved):
            shutil.copy2(resolved, path)
        return
    for prefix, merged in MERGED.items():
        if target.startswith(prefix):
            target = merged + target[len(prefix) :]
    if target.startswith("/usr/"):
        os.unlink(path)
        os.symlink(ROOT + target, path)


def write_manifest(names: list[str]) -> None:
    """MANIFEST: the real paths of the programs `names` and of their scripts' interpreters."""
    paths = set()
    for name in names:
        found = shutil.which(name, path=IMAGE_PATH)
        if found is None:  # a builtin only (cd, exit), or not in this image
            continue
        real = os.path.realpath(found)
        paths.add(real)
        with open(real, "rb") as program:
            first = program.readline(256)
        if first.startswith(b"#!") and first[2:].split():
            paths.add(os.path.realpath(first[2:].split()[0].decode()))
    with open(MANIFEST, "w") as manifest:
        manifest.write("".join(f"{path}\n" for path in sorted(paths) if path.startswith("/usr/")))


def main() -> None:
    """Copy /usr into ROOT, relocate it, write the loader cache, then READY."""
    if os.path.exists(READY):
        return
    subprocess.run(["cp", "-a", "/usr", ROOT + "/"], check=True)
    for folder in DROPPED:
        shutil.rmtree(os.path.join(ROOT, "usr", folder), ignore_errors=True)
    patch_loader(os.path.realpath(MULTIARCH + "/ld-linux-x86-64.so.2"))
    for name, target in FOLDER_LINKS.items():
        if not os.path.lexists(os.path.join(ROOT, name)):
            os.symlink(target, os.path.join(ROOT, name))
    for top, folders, files in os.walk(ROOT + "/usr"):
        for name in folders + files:
            path = os.path.join(top, name)
            if os.path.islink(path):
                relink(path)
            elif os.path.isfile(path) and (os.access(path, os.X_OK) or ".so" in name):
                set_interpreter(path)
    with open(ROOT + "/ld.so.conf", "w") as conf:
        conf.write(f"{ROOT}{MULTIARCH}\n{ROOT}/usr/lib\n{ROOT}/usr/local/lib\n")
    subprocess.run(["ldconfig", "-X", "-C", ROOT + "/ldso.cache", "-f", ROOT + "/ld.so.conf"],
                   check=True)  # fmt: skip
    open(EMPTY, "w").close()
    write_manifest(sys.argv[1:])
    with open(READY, "w") as ready:
        ready.write(sys.version)


main()
