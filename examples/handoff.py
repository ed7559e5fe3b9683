"""Disaggregated prefill -> decode with SplitZip: a real model's KV cache crosses between ranks.

Rank 0 (prefill) runs TinyStories-656K (transformers LlamaForCausalLM) over a prompt, takes the
first token and sends the KV cache, per layer K and V, as blocks with Communicator.send_blocks.
Rank 1 (decode) receives them into its own transformers DynamicCache and continues greedy
decoding. It then checks its tokens against a single-process run (model.generate on the whole
prompt) and prints KV bytes, wire bytes, ratio, transfer times with SplitZip and with the raw wire
(a codec-off communicator), and its time to first token.

    python examples/handoff.py                  # starts both ranks itself (torchrun, gloo), on the
                                                # GPU when torch sees one (--device cpu or cuda)
    torchrun --nproc-per-node 2 examples/handoff.py

The ranks meet through torch.distributed (gloo): Communicator.from_torch_distributed shares the
unique ids. Exits 1 if the tokens differ.
"""
from __future__ import annotations

import argparse
import inspect
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import torch
import torch.distributed as dist

import splitzip

MODEL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "models" / "tinystories-656k"
PROMPT = ("Once upon a time, there was a little girl named Lily. She lived in a small house near a big "
          "forest with her mom, her dad and her dog Max. Every morning Lily and Max went for a walk to "
          "the river. They liked to watch the fish jump and the ducks swim. One day, Lily saw a shiny "
          "red box under a tree. She was curious and wanted to know what was inside. Max barked and "
          "wagged his tail. Lily opened the box slowly. Inside, there was a tiny bird with a broken "
          "wing. Lily felt sad for the bird. She said, \"Don't worry, little bird. I will help you.\" "
          "She carried the box home carefully and showed it to her mom. Her mom smiled and said")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, default=MODEL, help="a transformers Llama checkpoint folder")
    p.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16", help="model and KV cache dtype")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where the model and the KV cache live; auto: cuda when torch sees a GPU")
    p.add_argument("--new-tokens", type=int, default=48, help="tokens to generate (the first from prefill)")
    p.add_argument("--repeats", type=int, default=10, help="timed transfers per wire (median reported)")
    return p.parse_args()


def forward(model, ids: torch.Tensor, cache=None):
    """model(ids) with a KV cache; transformers 5 renamed past_key_values to cache."""
    name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    kwargs = {} if cache is None else {name: cache}
    out = model(ids, use_cache=True, **kwargs)
    return out.logits, getattr(out, "cache", None) or out.past_key_values


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def transfer(comm: splitzip.Communicator, blocks: list[torch.Tensor], rank: int, device: torch.device) -> float:
    """One KV hand-off, both ranks starting together; returns its seconds as rank 1 sees them."""
    dist.barrier()
    start = time.perf_counter()
    if rank == 0:
        comm.send_blocks(blocks, peer=1)
    else:
        comm.recv_blocks(blocks, peer=0)
    sync(device)
    return time.perf_counter() - start


def main() -> int:
    args = parse_args()
    if "LOCAL_RANK" not in os.environ:  # not under torchrun: start the two ranks ourselves
        return subprocess.call([sys.executable, "-m", "torch.distributed.run", "--standalone",
                                "--nproc-per-node=2", __file__, *sys.argv[1:]])
    import transformers
    from tokenizers import Tokenizer
    from transformers import DynamicCache, LlamaForCausalLM
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()

    os.environ.setdefault("SZ_SOCKET_IFNAME", "lo")  # both ranks on this machine
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    use_cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    device = torch.device("cuda", rank % torch.cuda.device_count()) if use_cuda else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[args.dtype]
    model = LlamaForCausalLM.from_pretrained(args.model, dtype=dtype).to(device).eval()
    ids = torch.tensor([Tokenizer.from_file(str(args.model / "tokenizer.json")).encode(PROMPT).ids], device=device)
    cfg = model.config
    kv_shape = (1, cfg.num_key_value_heads, ids.shape[1], cfg.hidden_size // cfg.num_attention_heads)
    # codec "on": on loopback the auto mode would measure the CPU codec slower than the wire and
    # send raw (docs/PIPELINE.md); the point here is the compressed path.
    comms = {"splitzip": splitzip.Communicator.from_torch_distributed(codec="on"),
             "raw": splitzip.Communicator.from_torch_distributed(codec="off")}

    with torch.inference_mode():
        if rank == 0:
            sync(device)
            start = time.perf_counter()
            logits, cache = forward(model, ids)
            first = int(logits[0, -1].argmax())
            sync(device)
            prefill_s = time.perf_counter() - start
            blocks = [t.contiguous() for layer in cache.layers for t in (layer.keys, layer.values)]
            assert all(tuple(b.shape) == kv_shape for b in blocks)
        else:
            blocks = [torch.empty(kv_shape, dtype=dtype, device=device) for _ in range(2 * cfg.num_hidden_layers)]
        # The hand-off that decoding continues from, then timed repeats of each wire.
        dist.barrier()
        start = time.perf_counter()
        if rank == 0:
            comms["splitzip"].send_blocks(blocks, peer=1)
            before = comms["splitzip"].stats()
        else:
            comms["splitzip"].recv_blocks(blocks, peer=0)
            cache = DynamicCache()
            for layer in range(cfg.num_hidden_layers):
                cache.update(blocks[2 * layer], blocks[2 * layer + 1], layer)
        control = [first, prefill_s] if rank == 0 else [None, None]
        dist.broadcast_object_list(control, src=0)  # the prefill's token travels with the request
        first, prefill_s = control
        tokens = [first]
        if rank == 1:
            logits, cache = forward(model, torch.tensor([[first]], device=device), cache)
            tokens.append(int(logits[0, -1].argmax()))
            sync(device)
            ttft_s = time.perf_counter() - start
            while len(tokens) < args.new_tokens and tokens[-1] != cfg.eos_token_id:
                logits, cache = forward(model, torch.tensor([[tokens[-1]]], device=device), cache)
                tokens.append(int(logits[0, -1].argmax()))
        times = {name: [transfer(comm, blocks, rank, device) for _ in range(args.repeats)]
                 for name, comm in comms.items()}
        if rank == 0:
            after = comms["splitzip"].stats()
            sent = [after[k] - before[k] for k in ("raw_bytes", "wire_bytes")]
        else:
            sent = [None, None]
        dist.broadcast_object_list(sent, src=0)
        for comm in comms.values():
            comm.close()
        if rank == 0:
            dist.destroy_process_group()
            return 0

        reference = model.generate(ids, max_new_tokens=args.new_tokens, do_sample=False,
                                   pad_token_id=cfg.eos_token_id)[0, ids.shape[1]:].tolist()
    dist.destroy_process_group()
    kv_bytes, wire_bytes = (s / args.repeats for s in sent)
    same = tokens == reference
    median_ms = {name: 1e3 * statistics.median(t) for name, t in times.items()}
    print(f"model {args.model.name} ({args.dtype}, {device.type}), prompt {ids.shape[1]} tokens, "
          f"{cfg.num_hidden_layers} layers x (K, V) blocks of {list(kv_shape)}")
    print(f"prefill on rank 0: {1e3 * prefill_s:.2f} ms")
    print(f"KV bytes {int(kv_bytes)}, wire bytes {int(wire_bytes)}, ratio {kv_bytes / wire_bytes:.4f}")
    print(f"transfer (median of {args.repeats}): splitzip {median_ms['splitzip']:.3f} ms, "
          f"raw wire {median_ms['raw']:.3f} ms")
    print(f"time to first token on rank 1 (KV receive + first decode step): {1e3 * ttft_s:.2f} ms")
    print(f"rank 1 tokens: {tokens}")
    print(f"reference    : {reference}")
    print(f"tokens identical to a single-process run: {'yes' if same else 'NO'}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
