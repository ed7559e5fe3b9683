"""Disaggregated prefill -> decode with SplitZip: a real model's KV cache crosses between ranks.

Rank 0 (prefill) runs TinyStories-656K (transformers LlamaForCausalLM) over a prompt, takes the
first token and sends the KV cache, per layer K and V, as blocks with Communicator.send_blocks:
layer by layer while the prefill runs (each layer's K and V as soon as its forward pass made them,
on a stream or thread of their own, overlapping the next layers), and whole after the prefill.
Rank 1 (decode) receives them into its own transformers DynamicCache and continues greedy
decoding from the layer-wise hand-off. It then checks its tokens against a single-process run
(model.generate on the whole prompt) and the layer-wise blocks against the whole-cache ones, and
prints KV bytes, wire bytes, ratio, transfer times with SplitZip and with the raw wire (a
codec-off communicator), and the time to first token of each way: whole and layer-wise, raw and
compressed, with the share of the transfer the layer-wise hand-off hid behind the prefill.

--random-llama LAYERS builds a Llama with seeded random weights (8 KV heads x 128, no download)
so that the KV is large enough for its transfer to show; --prompt-tokens sets the prompt length.
It takes --model's tokenizer and vocabulary when the folder exists, else seeded random token ids.

    python examples/handoff.py                  # starts both ranks itself (torchrun, gloo), on the
                                                # GPU when torch sees one (--device cpu or cuda)
    torchrun --nproc-per-node 2 examples/handoff.py
    python examples/handoff.py --threads        # both ranks as threads of this process

The ranks meet through torch.distributed (gloo): Communicator.from_torch_distributed shares the
unique ids. With --threads they are two threads of one process, each on a CUDA stream of its own,
sharing the unique ids in memory: on one GPU that is how prefill and transfer can overlap at all,
since the kernels of two processes on one GPU take turns (time-slicing) rather than run side by
side. Exits 1 if the tokens differ.
"""
from __future__ import annotations

import argparse
import contextlib
import inspect
import json
import os
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import torch
import torch.distributed as dist

import splitzip

RANDOM_VOCAB = 2048  # --random-llama without a model folder: TinyStories-656K's vocabulary size
# The model: this checkout's neighbour ../shared copy when there is one, else the Hugging Face hub.
LOCAL_MODEL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "models" / "tinystories-656k"
HUB_MODEL = "raincandy-u/TinyStories-656K"
MODEL = str(LOCAL_MODEL) if LOCAL_MODEL.is_dir() else HUB_MODEL
PROMPT = ("Once upon a time, there was a little girl named Lily. She lived in a small house near a big "
          "forest with her mom, her dad and her dog Max. Every morning Lily and Max went for a walk to "
          "the river. They liked to watch the fish jump and the ducks swim. One day, Lily saw a shiny "
          "red box under a tree. She was curious and wanted to know what was inside. Max barked and "
          "wagged his tail. Lily opened the box slowly. Inside, there was a tiny bird with a broken "
          "wing. Lily felt sad for the bird. She said, \"Don't worry, little bird. I will help you.\" "
          "She carried the box home carefully and showed it to her mom. Her mom smiled and said")


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=MODEL,
                   help=f"a transformers Llama checkpoint: a local folder or a hub id (default: {MODEL})")
    p.add_argument("--dtype", choices=("bf16", "fp32"), default="bf16", help="model and KV cache dtype")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where the model and the KV cache live; auto: cuda when torch sees a GPU")
    p.add_argument("--new-tokens", type=int, default=48, help="tokens to generate (the first from prefill)")
    p.add_argument("--repeats", type=int, default=10, help="timed transfers per wire (median reported)")
    p.add_argument("--random-llama", type=int, default=0, metavar="LAYERS",
                   help="a Llama of LAYERS layers with seeded random weights (8 KV heads x 128, hidden 1024) "
                        "instead of --model's weights (its tokenizer is kept)")
    p.add_argument("--prompt-tokens", type=int, default=0, help="the prompt repeated to this many tokens (0: once)")
    p.add_argument("--json", type=Path, help="write the figures here (rank 1)")
    p.add_argument("--threads", action="store_true",
                   help="run both ranks as threads of this process (on one GPU: side by side, not time-sliced)")
    return p.parse_args()


class TorchWorld:
    """The ranks as processes under torchrun, meeting through torch.distributed (gloo)."""

    def __init__(self):
        dist.init_process_group("gloo")
        self.rank = dist.get_rank()

    def barrier(self) -> None:
        dist.barrier()

    def broadcast(self, value, src: int = 0):
        holder = [value if self.rank == src else None]
        dist.broadcast_object_list(holder, src=src)
        return holder[0]

    def communicator(self, **config) -> splitzip.Communicator:
        return splitzip.Communicator.from_torch_distributed(**config)

    @contextlib.contextmanager
    def loading(self):
        yield

    def close(self) -> None:
        # Both ranks tear gloo down together: a rank that destroys its group and exits while the
        # other still holds its connections can abort at exit in gloo's threads.
        dist.barrier()
        dist.destroy_process_group()


class ThreadWorld:
    """The ranks as two threads of this process: what they share, and one rank's view of it. A
    rank that fails breaks the barrier, so the other raises instead of waiting for it."""

    class Shared:
        def __init__(self):
            self.barrier = threading.Barrier(2, timeout=600)
            self.lock = threading.Lock()
            self.box = None

    def __init__(self, shared: ThreadWorld.Shared, rank: int):
        self.shared, self.rank = shared, rank

    def barrier(self) -> None:
        self.shared.barrier.wait()

    def broadcast(self, value, src: int = 0):
        if self.rank == src:
            self.shared.box = value
        self.barrier()
        value = self.shared.box
        self.barrier()  # read by both before the next broadcast writes
        return value

    def communicator(self, **config) -> splitzip.Communicator:
        uid = self.broadcast(splitzip.get_unique_id() if self.rank == 0 else None)
        return splitzip.Communicator(self.rank, 2, uid, **config)

    def loading(self):
        return self.shared.lock  # one rank at a time: the seeded weights use torch's global generator

    def close(self) -> None:
        pass


def load_model(args, dtype):
    """--model's checkpoint, or with --random-llama a seeded random Llama (the same on both ranks)."""
    from transformers import LlamaConfig, LlamaForCausalLM
    if not args.random_llama:
        return LlamaForCausalLM.from_pretrained(args.model, dtype=dtype)
    base = LlamaConfig.from_pretrained(args.model) if Path(args.model).is_dir() else LlamaConfig(vocab_size=RANDOM_VOCAB)
    positions = max(8192, 2 * (args.prompt_tokens + args.new_tokens))
    cfg = LlamaConfig(vocab_size=base.vocab_size, hidden_size=1024, intermediate_size=2816,
                      num_hidden_layers=args.random_llama, num_attention_heads=8, num_key_value_heads=8,
                      head_dim=128, max_position_embeddings=positions, bos_token_id=base.bos_token_id,
                      eos_token_id=base.eos_token_id)
    torch.manual_seed(0)
    return LlamaForCausalLM(cfg).to(dtype)


class LayerSender:
    """Rank 0's layer-wise hand-off: after each decoder layer's forward pass, that layer's K and V
    (from the DynamicCache the prefill fills) go to rank 1, on a CUDA stream of their own (the
    send is enqueued behind the layer's kernels) or, for host tensors, on a thread of their own
    (the host path runs a send to completion in its caller)."""

    def __init__(self, model, cache, comm: splitzip.Communicator, device: torch.device):
        self.cache, self.comm, self.device = cache, comm, device
        self.stream = torch.cuda.Stream(device) if device.type == "cuda" else None
        self.queue: queue.Queue = queue.Queue()
        self.error: list[BaseException] = []
        self.thread = None if self.stream else threading.Thread(target=self._drain, daemon=True)
        if self.thread:
            self.thread.start()
        self.hooks = [layer.register_forward_hook(lambda _m, _a, _o, i=i: self._send(i))
                      for i, layer in enumerate(model.model.layers)]

    def _send(self, i: int) -> None:
        kv = [self.cache.layers[i].keys.contiguous(), self.cache.layers[i].values.contiguous()]
        if self.stream is None:
            self.queue.put(kv)
            return
        self.stream.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(self.stream):
            for t in kv:
                t.record_stream(self.stream)
            self.comm.send_blocks(kv, peer=1)

    def _drain(self) -> None:
        while (kv := self.queue.get()) is not None:
            if self.error:
                continue  # after a failed send the rest is dropped; finish raises the first error
            try:
                self.comm.send_blocks(kv, peer=1)
            except BaseException as e:
                self.error.append(e)

    def finish(self) -> None:
        """Waits for every layer's send; removes the hooks."""
        for h in self.hooks:
            h.remove()
        if self.thread:
            self.queue.put(None)
            self.thread.join()
            if self.error:
                raise self.error[0]
        else:
            self.stream.synchronize()


def forward(model, ids: torch.Tensor, cache=None):
    """model(ids) with a KV cache; transformers 5 renamed past_key_values to cache."""
    name = "cache" if "cache" in inspect.signature(model.forward).parameters else "past_key_values"
    kwargs = {} if cache is None else {name: cache}
    out = model(ids, use_cache=True, **kwargs)
    return out.logits, getattr(out, "cache", None) or out.past_key_values


def sync(device: torch.device) -> None:
    """Waits for this rank's stream (not the device: with --threads the other rank's kernels, which
    may wait for this rank, run on it too)."""
    if device.type == "cuda":
        torch.cuda.current_stream(device).synchronize()


def transfer(world, comm: splitzip.Communicator, blocks: list[torch.Tensor], device: torch.device) -> float:
    """One KV hand-off, both ranks starting together; returns its seconds as rank 1 sees them."""
    rank = world.rank
    world.barrier()
    start = time.perf_counter()
    if rank == 0:
        comm.send_blocks(blocks, peer=1)
    else:
        comm.recv_blocks(blocks, peer=0)
    sync(device)
    seconds = time.perf_counter() - start
    comm.ready()  # a failure in the kernels is raised here, by the transfer that had it
    return seconds


def timed_transfer(world, comm, blocks, device, what: str) -> float:
    """transfer(), its failure naming `what`."""
    try:
        return transfer(world, comm, blocks, device)
    except Exception:
        print(f"rank {world.rank}: {what} failed", file=sys.stderr, flush=True)
        raise


def handoff(world, model, ids, comm, device, blocks, layered: bool):
    """One request: rank 0's prefill and KV hand-off (layer by layer during the prefill, or whole
    after it), and the prefill's first token; rank 1 receives into `blocks` and runs its first
    decode step. Returns (first token, seconds: rank 0's prefill, rank 1's time to first token from
    the common start, and on rank 1 its first decode token and cache, on rank 0 the KV blocks it
    sent)."""
    from transformers import DynamicCache
    layers = len(blocks) // 2
    rank = world.rank
    world.barrier()
    start = time.perf_counter()
    if rank == 0:
        cache = DynamicCache()
        sender = LayerSender(model, cache, comm, device) if layered else None
        try:
            logits, cache = forward(model, ids, cache)
        finally:
            if sender:
                sender.finish()
        token = int(logits[0, -1].argmax())
        sync(device)
        prefill_s = time.perf_counter() - start
        kv = [t for layer in cache.layers for t in (layer.keys, layer.values)]
        if not layered:
            comm.send_blocks(kv, peer=1)
            sync(device)
        world.broadcast(token, src=0)  # the prefill's token travels with the request
        comm.ready()  # a failure in the kernels is raised here, by the hand-off that had it (after
        # the broadcast, which rank 1 waits for whatever happened to the transfer)
        return token, prefill_s, 0.0, kv
    if layered:
        for i in range(layers):
            comm.recv_blocks(blocks[2 * i:2 * i + 2], peer=0)
    else:
        comm.recv_blocks(blocks, peer=0)
    token = world.broadcast(None, src=0)
    cache = DynamicCache()
    for i in range(layers):
        cache.update(blocks[2 * i], blocks[2 * i + 1], i)
    logits, cache = forward(model, torch.tensor([[token]], device=device), cache)
    second = int(logits[0, -1].argmax())
    sync(device)
    seconds = time.perf_counter() - start
    comm.ready()  # as rank 0's: a receive that failed in its kernels is this hand-off's failure
    return token, 0.0, seconds, (second, cache)


def main() -> int:
    args = parse_args()
    if not args.threads and "LOCAL_RANK" not in os.environ:  # not under torchrun: start the two ranks ourselves
        return subprocess.call([sys.executable, "-m", "torch.distributed.run", "--standalone",
                                "--nproc-per-node=2", __file__, *sys.argv[1:]])
    import transformers
    transformers.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    os.environ.setdefault("SZ_SOCKET_IFNAME", "lo")  # both ranks on this machine
    if not args.threads:
        code = run_rank(args, TorchWorld())
        # Both communicators are closed and the gloo group destroyed by now. The interpreter's own
        # teardown is skipped: at that point gloo's threads have aborted the process now and then
        # ("terminate called without an active exception" on rank 0 in CI, 2026-12-07, after a
        # run that was bit-exact and printed every figure), which torchrun reports as the job's
        # failure.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    shared, results = ThreadWorld.Shared(), [1, 1]

    def thread(rank: int) -> None:
        try:
            results[rank] = run_rank(args, ThreadWorld(shared, rank))
        except BaseException:
            shared.barrier.abort()  # the other rank raises at its next barrier instead of waiting
            raise

    ranks = [threading.Thread(target=thread, args=(r,), name=f"rank {r}") for r in range(2)]
    for t in ranks:
        t.start()
    for t in ranks:
        t.join()
    return max(results)


def run_rank(args, world) -> int:
    """One rank's part: rank 0 prefills and sends, rank 1 receives, decodes and reports."""
    rank = world.rank
    use_cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
    device = torch.device("cuda", rank % torch.cuda.device_count()) if use_cuda else torch.device("cpu")
    if device.type == "cuda":
        torch.cuda.set_device(device)
    # --threads on a GPU: a stream of this rank's own for everything it does (the legacy default
    # stream, shared by the threads, would order one rank's kernels behind the other's).
    on_stream = (torch.cuda.stream(torch.cuda.Stream(device)) if args.threads and device.type == "cuda"
                 else contextlib.nullcontext())
    with on_stream:
        return rank_body(args, world, device)


def rank_body(args, world, device: torch.device) -> int:
    from tokenizers import Tokenizer
    rank = world.rank
    dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[args.dtype]
    with world.loading():
        model = load_model(args, dtype).to(device).eval()
    if (Path(args.model) / "tokenizer.json").is_file():
        prompt = Tokenizer.from_file(str(Path(args.model) / "tokenizer.json")).encode(PROMPT).ids
    elif args.random_llama:  # no tokenizer: seeded random token ids, the same on both ranks
        prompt = torch.randint(3, RANDOM_VOCAB, (256,), generator=torch.Generator().manual_seed(1)).tolist()
    else:  # a hub id
        prompt = Tokenizer.from_pretrained(args.model).encode(PROMPT).ids
    if args.prompt_tokens:
        prompt = (prompt * (args.prompt_tokens // len(prompt) + 1))[:args.prompt_tokens]
    ids = torch.tensor([prompt], device=device)
    cfg = model.config
    head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
    kv_shape = (1, cfg.num_key_value_heads, ids.shape[1], head_dim)
    # codec "on": on loopback the auto mode would measure the CPU codec slower than the wire and
    # send raw (docs/PIPELINE.md); the point here is the compressed path.
    comms = {"splitzip": world.communicator(codec="on"), "raw": world.communicator(codec="off")}
    new_blocks = lambda: [torch.empty(kv_shape, dtype=dtype, device=device) for _ in range(2 * cfg.num_hidden_layers)]

    with torch.inference_mode():
        blocks = new_blocks()
        # The request that decoding continues from: layer-wise, compressed.
        before = comms["splitzip"].stats()
        first, prefill_s, _, decoded = handoff(world, model, ids, comms["splitzip"], device, blocks, True)
        after = comms["splitzip"].stats()
        tokens = [first]
        if rank == 0:  # the timed transfers below send this request's KV
            for block, kv in zip(blocks, decoded):
                block.copy_(kv)
            sync(device)
            del decoded  # the prefill's cache: 256 MiB at the GPU script's size
        if rank == 1:
            second, cache = decoded
            tokens.append(second)
            while len(tokens) < args.new_tokens and tokens[-1] != cfg.eos_token_id:
                logits, cache = forward(model, torch.tensor([[tokens[-1]]], device=device), cache)
                tokens.append(int(logits[0, -1].argmax()))
        # The same request handed off whole: the blocks must be the layer-wise ones, bit for bit.
        whole = new_blocks()
        handoff(world, model, ids, comms["splitzip"], device, whole, False)
        same_blocks = all(torch.equal(a.view(torch.uint8), b.view(torch.uint8)) for a, b in zip(blocks, whole))
        # Timed: transfers alone, then requests (prefill + hand-off + first decode step) each way.
        times = {name: [timed_transfer(world, comm, blocks, device, f"transfer {i} on the {name} communicator")
                        for i in range(args.repeats)] for name, comm in comms.items()}
        ttft = {f"{way}_{'sz' if name == 'splitzip' else 'raw'}":
                [handoff(world, model, ids, comm, device, blocks, way == "layer")[2] for _ in range(args.repeats)]
                for way in ("whole", "layer") for name, comm in comms.items()}
        sent = world.broadcast([after[k] - before[k] for k in ("raw_bytes", "wire_bytes")] if rank == 0 else None)
        prefill_s = world.broadcast(prefill_s)
        for comm in comms.values():
            comm.close()
        if rank == 0:
            world.close()
            return 0

        reference = model.generate(ids, max_new_tokens=args.new_tokens, do_sample=False,
                                   pad_token_id=cfg.eos_token_id)[0, ids.shape[1]:].tolist()
    world.close()
    kv_bytes, wire_bytes = sent
    same = tokens == reference and same_blocks
    median_ms = {name: 1e3 * statistics.median(t) for name, t in times.items()}
    ttft_ms = {k: 1e3 * statistics.median(v) for k, v in ttft.items()}
    # The transfer time the layer-wise hand-off took off the time to first token.
    hidden = {c: max(0.0, min(1.0, (ttft_ms[f"whole_{c}"] - ttft_ms[f"layer_{c}"]) / median_ms[n]))
              for c, n in (("sz", "splitzip"), ("raw", "raw"))}
    name = f"random Llama, {cfg.num_hidden_layers} layers" if args.random_llama else Path(args.model).name
    print(f"model {name} ({args.dtype}, {device.type}), prompt {ids.shape[1]} tokens, "
          f"{cfg.num_hidden_layers} layers x (K, V) blocks of {list(kv_shape)}")
    print(f"prefill on rank 0 (layer-wise hand-off running): {1e3 * prefill_s:.2f} ms")
    print(f"KV bytes {int(kv_bytes)}, wire bytes {int(wire_bytes)}, ratio {kv_bytes / wire_bytes:.4f}")
    print(f"transfer (median of {args.repeats}): splitzip {median_ms['splitzip']:.3f} ms, "
          f"raw wire {median_ms['raw']:.3f} ms")
    print(f"time to first token on rank 1 (median of {args.repeats}; prefill, KV hand-off, first decode step): "
          f"whole raw {ttft_ms['whole_raw']:.2f} ms, whole splitzip {ttft_ms['whole_sz']:.2f} ms, "
          f"layer-wise raw {ttft_ms['layer_raw']:.2f} ms, layer-wise splitzip {ttft_ms['layer_sz']:.2f} ms")
    print(f"transfer hidden by the layer-wise hand-off: splitzip {100 * hidden['sz']:.0f}%, raw {100 * hidden['raw']:.0f}%")
    print(f"rank 1 tokens: {tokens}")
    print(f"reference    : {reference}")
    print(f"layer-wise blocks identical to the whole-cache hand-off's: {'yes' if same_blocks else 'NO'}")
    print(f"tokens identical to a single-process run: {'yes' if same else 'NO'}")
    if args.json:
        args.json.write_text(json.dumps({
            "model": name, "device": device.type, "dtype": args.dtype, "prompt_tokens": int(ids.shape[1]),
            "kv_bytes": int(kv_bytes), "ratio": kv_bytes / wire_bytes, "transfer_ms": median_ms, "ttft_ms": ttft_ms,
            "hidden_share": hidden["sz"], "hidden_share_raw": hidden["raw"], "tokens_identical": same}, indent=1) + "\n")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
