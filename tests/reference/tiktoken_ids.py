#!/usr/bin/env python3
"""Reference GPT-2 token ids from OpenAI's tiktoken, for tests/test_tokenizer.cpp.

The gpt2 encoding is built from the local ranks file (tiktoken cannot download here, and must not):
same pattern and special token as tiktoken_ext/openai_public.py. Input bytes are decoded as Python does
with errors="replace", which is what Tokamak's encoder promises to match.

  tiktoken_ids.py RANKS encode FILE        ids of FILE's text, space-separated, on one line
  tiktoken_ids.py RANKS batch IN.json      IN.json: list of hex strings; prints a JSON list of
                                           {"ids": [...], "replaced": number of U+FFFD substituted}
  tiktoken_ids.py RANKS gpt2-files DIR     writes GPT-2's other form, DIR/encoder.json and DIR/vocab.bpe,
                                           derived from the ranks
"""
import json
import os
import sys

os.environ["TIKTOKEN_CACHE_DIR"] = ""  # read the local file as it is; no cache folder, no network
import tiktoken  # noqa: E402
import tiktoken.load  # noqa: E402

GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def gpt2(ranks_path):
    return tiktoken.Encoding(
        name="gpt2",
        pat_str=GPT2_PATTERN,
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(ranks_path),
        special_tokens={"<|endoftext|>": 50256},
    )


def reference(enc, data):
    text = data.decode("utf-8", errors="replace")
    replaced = text.count("\ufffd") - data.count(b"\xef\xbf\xbd")
    return {"ids": enc.encode_ordinary(text), "replaced": replaced}


def bytes_to_unicode():
    """GPT-2's map from bytes to printable characters (encoder.py in openai/gpt-2)."""
    bs = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


def last_merge(token, ranks, rank):
    """The pair whose merge made `token`: BPE on its bytes with only the ranks below its own leaves two parts."""
    parts = [bytes([b]) for b in token]
    while len(parts) > 1:
        best = None
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and r < rank and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            break
        i = best[1]
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    if len(parts) == 2:
        return parts
    # Not reachable for GPT-2's vocabulary; any split into two older tokens keeps vocab.bpe consistent.
    for i in range(1, len(token)):
        if ranks.get(token[:i], rank) < rank and ranks.get(token[i:], rank) < rank:
            return [token[:i], token[i:]]
    raise SystemExit(f"cannot find the merge that made token {rank}")


def write_gpt2_files(ranks_path, out_dir):
    ranks = tiktoken.load.load_tiktoken_bpe(ranks_path)
    b2u = bytes_to_unicode()
    show = lambda b: "".join(b2u[x] for x in b)  # noqa: E731
    encoder = {show(token): rank for token, rank in ranks.items()}
    encoder["<|endoftext|>"] = 50256
    with open(os.path.join(out_dir, "encoder.json"), "w", encoding="utf-8") as f:
        json.dump(encoder, f, ensure_ascii=False)
    lines = ["#version: 0.2"]
    for token, rank in sorted(ranks.items(), key=lambda kv: kv[1]):
        if rank >= 256:
            left, right = last_merge(token, ranks, rank)
            lines.append(show(left) + " " + show(right))
    with open(os.path.join(out_dir, "vocab.bpe"), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


def main(argv):
    if len(argv) != 4:
        raise SystemExit(__doc__)
    ranks_path, mode, arg = argv[1], argv[2], argv[3]
    if mode == "gpt2-files":
        write_gpt2_files(ranks_path, arg)
        return
    enc = gpt2(ranks_path)
    if mode == "encode":
        with open(arg, "rb") as f:
            ids = reference(enc, f.read())["ids"]
        sys.stdout.write(" ".join(map(str, ids)) + "\n")
    elif mode == "batch":
        with open(arg, encoding="utf-8") as f:
            inputs = [bytes.fromhex(h) for h in json.load(f)]
        json.dump([reference(enc, data) for data in inputs], sys.stdout)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
