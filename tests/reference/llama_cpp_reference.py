"""llama.cpp itself (PyPI's llama-cpp-python, built by scripts/setup.sh) as the reference for GGUF exports.

Usage: llama_cpp_reference.py FILE PROMPT_IDS NEW TEXT_FILE
  Loads FILE on the CPU and prints, as JSON: "tokens", llama.cpp's tokenization of TEXT_FILE's text (no BOS, no
  special tokens); "greedy", the NEW tokens it picks after PROMPT_IDS (comma-separated), each the argmax of its
  logits; and "logits", the logits after the prompt's last token.
Exit code 3 when llama_cpp is not installed (the tests skip).
"""
import json
import sys

try:
    import numpy as np
    from llama_cpp import Llama
except ImportError:
    sys.exit(3)


def main() -> None:
    path, prompt, new = sys.argv[1], [int(i) for i in sys.argv[2].split(",")], int(sys.argv[3])
    text = open(sys.argv[4], "rb").read()
    # An f32 KV cache (llama.cpp keeps f16 by default), so an f32 file is compared at f32 throughout.
    llm = Llama(model_path=path, n_ctx=0, n_threads=2, n_batch=64, logits_all=True, verbose=False, type_k=0, type_v=0)
    tokens = llm.tokenize(text, add_bos=False, special=False)
    llm.eval(prompt)
    first = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float64)
    greedy = []
    logits = first
    for _ in range(new):
        greedy.append(int(np.argmax(logits)))
        llm.eval([greedy[-1]])
        logits = np.asarray(llm.scores[llm.n_tokens - 1], dtype=np.float64)
    json.dump({"tokens": [int(t) for t in tokens], "greedy": greedy, "logits": first.tolist()}, sys.stdout)


if __name__ == "__main__":
    main()
