"""Several processes, one model: PyTorch's own `torch.distributed` under `torchrun`.

`torchrun --nproc-per-node N -m model.cli train …` starts N copies of the trainer and sets
RANK / LOCAL_RANK / WORLD_SIZE / MASTER_ADDR / MASTER_PORT; `setup()` joins them into one process
group (NCCL between GPUs, gloo between CPU processes) and picks this rank's device. Without
torchrun there is one process and every helper here is a no-op, so the same code trains alone.
"""
from __future__ import annotations

import datetime
import os
from dataclasses import dataclass

import torch
import torch.distributed as dist

# Rank 0 learns the BPE vocabulary (minutes on WMT) while the others wait in a broadcast: a
# collective must be allowed to wait that long (NCCL's default is 10 minutes).
COLLECTIVE_TIMEOUT = datetime.timedelta(hours=2)


@dataclass(frozen=True)
class Processes:
    """Who this process is among the processes training together."""

    rank: int = 0
    world_size: int = 1
    local_rank: int = 0
    device: torch.device = torch.device("cpu")

    @property
    def distributed(self) -> bool:
        return self.world_size > 1

    @property
    def is_main(self) -> bool:
        """Rank 0 alone prints, evaluates and writes checkpoints."""
        return self.rank == 0


def launched_by_torchrun() -> bool:
    return "WORLD_SIZE" in os.environ and "RANK" in os.environ


def setup(device: str = "auto") -> Processes:
    """Join the process group torchrun describes (or stand alone) and choose this rank's device:
    with CUDA, GPU LOCAL_RANK and NCCL; otherwise the CPU and gloo."""
    from model.nn.devices import resolve_device

    if not launched_by_torchrun() or int(os.environ["WORLD_SIZE"]) == 1:
        return Processes(device=resolve_device(device))
    rank, world, local = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]), int(os.environ.get("LOCAL_RANK", 0))
    wanted = resolve_device(device)
    if wanted.type == "cuda":
        torch.cuda.set_device(local)
        wanted = torch.device("cuda", local)
    if not dist.is_initialized():
        dist.init_process_group("nccl" if wanted.type == "cuda" else "gloo", timeout=COLLECTIVE_TIMEOUT,
                                device_id=wanted if wanted.type == "cuda" else None)
    return Processes(rank, world, local, wanted)


def teardown() -> None:
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()


def all_reduce_sum(values: list[float], procs: Processes) -> list[float]:
    """Element-wise sums over all ranks (float64, so token counts stay exact)."""
    if not procs.distributed:
        return [float(v) for v in values]
    t = torch.tensor(values, dtype=torch.float64, device=_comm_device(procs))
    dist.all_reduce(t, op=dist.ReduceOp.SUM)
    return t.tolist()


def all_gather_tensor(t: torch.Tensor, procs: Processes) -> list[torch.Tensor]:
    """Every rank's copy of a same-shaped tensor, in rank order (on the CPU)."""
    if not procs.distributed:
        return [t.cpu()]
    t = t.to(_comm_device(procs))
    out = [torch.empty_like(t) for _ in range(procs.world_size)]
    dist.all_gather(out, t)
    return [o.cpu() for o in out]


def broadcast_text(text: str | None, procs: Processes) -> str:
    """Rank 0's string on every rank (e.g. a tokenizer's JSON), sent as bytes, not a pickle."""
    if not procs.distributed:
        return text or ""
    dev = _comm_device(procs)
    data = (text or "").encode("utf-8") if procs.is_main else b""
    size = torch.tensor([len(data)], dtype=torch.long, device=dev)
    dist.broadcast(size, 0)
    buf = torch.zeros(int(size), dtype=torch.uint8, device=dev)
    if procs.is_main:
        buf.copy_(torch.frombuffer(bytearray(data), dtype=torch.uint8))
    dist.broadcast(buf, 0)
    return buf.cpu().numpy().tobytes().decode("utf-8")


def barrier(procs: Processes) -> None:
    if procs.distributed:
        dist.barrier()


def wrap(model: torch.nn.Module, procs: Processes) -> torch.nn.Module:
    """DistributedDataParallel around the model (it averages gradients during backward); the
    model itself when alone. DDP copies rank 0's weights to every rank when it is built."""
    if not procs.distributed:
        return model
    from torch.nn.parallel import DistributedDataParallel

    ids = [procs.device.index] if procs.device.type == "cuda" else None
    return DistributedDataParallel(model, device_ids=ids)


def _comm_device(procs: Processes) -> torch.device:
    return procs.device if procs.device.type == "cuda" else torch.device("cpu")


__all__ = ["Processes", "setup", "teardown", "all_reduce_sum", "all_gather_tensor", "broadcast_text", "barrier",
           "wrap", "launched_by_torchrun"]
