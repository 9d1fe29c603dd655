"""PyPI's gguf package (llama.cpp's own reader) as the reference for `tokamak export --format gguf`.

Usage: gguf_reader.py FILE [F32_FILE]
  Reads FILE with gguf.GGUFReader and prints, as JSON, its metadata (arrays as their length, first and last
  elements) and every tensor: name, shape (innermost first, as ggml counts), type, and the sum, sum of squares
  and first values of its dequantized data. With F32_FILE (an f32 export of the same model), each tensor of
  FILE that is not f32 is quantized again from F32_FILE's values with gguf's own quantizer, and "same_bytes"
  says whether that gives FILE's bytes exactly.
Exit code 3 when gguf is not installed (the tests skip).
"""
import json
import sys

try:
    import numpy as np
    import gguf
    from gguf.quants import dequantize, quantize
except ImportError:
    sys.exit(3)


def field_value(field):
    kind = field.types[0]
    if kind == gguf.GGUFValueType.ARRAY:
        items = [field.contents(i) for i in (0, len(field.data) - 1)] if field.data else []
        return {"len": len(field.data), "first": items[0] if items else None, "last": items[-1] if items else None,
                "item_type": field.types[1].name}
    return field.contents()


def main() -> None:
    reader = gguf.GGUFReader(sys.argv[1])
    f32 = {t.name: t for t in gguf.GGUFReader(sys.argv[2]).tensors} if len(sys.argv) > 2 else {}
    out = {"metadata": {}, "types": {}, "tensors": []}
    for name, field in reader.fields.items():
        if name.startswith("GGUF."):
            continue  # the header's own fields
        out["metadata"][name] = field_value(field)
        out["types"][name] = field.types[0].name
    for t in reader.tensors:
        values = dequantize(t.data, t.tensor_type).astype(np.float64).reshape(-1)
        entry = {"name": t.name, "shape": [int(d) for d in t.shape], "type": t.tensor_type.name,
                 "offset": int(t.data_offset), "sum": float(values.sum()), "sumsq": float((values ** 2).sum()),
                 "first": [float(v) for v in values[:4]]}
        if t.name in f32 and t.tensor_type != gguf.GGMLQuantizationType.F32:
            source = np.asarray(f32[t.name].data, dtype=np.float32)
            again = quantize(source, t.tensor_type)
            entry["same_bytes"] = bool(np.array_equal(again.view(np.uint8).reshape(-1),
                                                      np.asarray(t.data).view(np.uint8).reshape(-1)))
        out["tensors"].append(entry)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
