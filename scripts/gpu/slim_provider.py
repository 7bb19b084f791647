"""Shrink onnxruntime-gpu's CUDA provider library for a machine that takes at most 64 MiB a call.

The provider (284 MB in 1.31.1) is mostly CUDA fat binaries: one compressed cubin per GPU architecture for each of
its 609 modules. This zeroes, in place and at the same offsets, every cubin that is not for ``--keep`` (90: H100
and H200), and those of modules whose kernels all belong to operators a messiah model never uses (CUTLASS GEMMs,
flash attention, mixture of experts, LLM kernels). Zeros compress to nothing, so the library packs to about 16 MB.
A zeroed module is never loaded unless one of its kernels runs; a model with other operators may need more kept.
Needs the ``zstd`` and ``c++filt`` commands (to read the kernels' names). Usage:
    python slim_provider.py libonnxruntime_providers_cuda.so slim.so [--keep 90]
"""

import argparse
import re
import struct
import subprocess
from pathlib import Path

FATBIN_MAGIC = struct.pack("<I", 0xBA55ED50)
UNUSED = re.compile(r"cutlass|flash|[Mm]oe|::llm::|[Aa]ttention|gated_delta")  # kernels of operators messiah lacks


def entries(data: bytes):
    """(offset of the payload, payload size, architecture) of every cubin or PTX entry of every fat binary."""
    pos = 0
    while (start := data.find(FATBIN_MAGIC, pos)) >= 0:
        _, _, header, size = struct.unpack_from("<IHHQ", data, start)
        if header != 16:  # the magic's bytes inside something else
            pos = start + 4
            continue
        p, end = start + header, start + header + size
        while p < end:
            _, _, entry_header, padded = struct.unpack_from("<HHII", data, p)
            yield p + entry_header, padded, struct.unpack_from("<I", data, p + 28)[0]
            p += entry_header + padded
        pos = end


def kernel_names(payload: bytes) -> list[str]:
    raw = subprocess.run(["zstd", "-dc"], input=payload, capture_output=True).stdout
    names = sorted({n.decode() for n in re.findall(rb"\.text\.(_Z\w+)", raw)})
    return subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True).stdout.split("\n")[
        : len(names)] if names else []


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("library", type=Path)
    ap.add_argument("out", type=Path)
    ap.add_argument("--keep", type=int, default=90, help="the GPU architecture to keep (90: Hopper)")
    args = ap.parse_args()
    data = bytearray(args.library.read_bytes())
    zeroed = kept = 0
    for offset, size, arch in list(entries(data)):
        names = kernel_names(bytes(data[offset : offset + size])) if arch == args.keep else []
        if arch != args.keep or (names and all(UNUSED.search(n) for n in names)):
            data[offset : offset + size] = bytes(size)
            zeroed += size
        else:
            kept += size
    args.out.write_bytes(data)
    print(f"kept {kept / 1e6:.1f} MB of GPU code, zeroed {zeroed / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
