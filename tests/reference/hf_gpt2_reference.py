"""Hugging Face transformers as the reference for Tokamak's GPT-2 export and import.

Usage: hf_gpt2_reference.py DIR IDS NEW [--make]
  Loads DIR (a folder written by `tokamak export --format hf`) with GPT2LMHeadModel and prints, as JSON, the
  logits for IDS (comma-separated token ids) and NEW greedy tokens after them. With --make it first writes a
  small random GPT-2 (2 layers, 2 heads, 32 wide, 16 positions, 60 tokens) to DIR with save_pretrained, so the
  test can import a folder that transformers itself wrote.
Exit code 3 when transformers is not installed (the tests skip).
"""
import json
import sys

try:
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel
except ImportError:
    sys.exit(3)


def main() -> None:
    folder, ids, new = sys.argv[1], [int(i) for i in sys.argv[2].split(",")], int(sys.argv[3])
    if "--make" in sys.argv[4:]:
        torch.manual_seed(0)
        config = GPT2Config(n_layer=2, n_head=2, n_embd=32, n_positions=16, vocab_size=60,
                            bos_token_id=0, eos_token_id=0)
        made = GPT2LMHeadModel(config)
        with torch.no_grad():  # biases and LayerNorms away from 0 and 1, so a mapping mistake cannot hide
            for p in made.parameters():
                p.add_(torch.randn_like(p) * 0.2)
        made.save_pretrained(folder)
    model = GPT2LMHeadModel.from_pretrained(folder, dtype=torch.float32).eval()
    with torch.no_grad():
        logits = model(torch.tensor([ids])).logits[0]
        seq = list(ids)
        for _ in range(new):  # greedy, the whole sequence each time (no cache: the plainest reference)
            seq.append(int(model(torch.tensor([seq])).logits[0, -1].argmax()))
    print(json.dumps({"logits": logits.tolist(), "greedy": seq[len(ids):]}))


if __name__ == "__main__":
    main()
