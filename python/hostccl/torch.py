"""torch.distributed backend "hostccl" (and "hccl" when that name is free).

    import torch.distributed as dist
    import hostccl.torch                      # registers the backend
    dist.init_process_group("hostccl")        # env:// (torchrun), or init_method=/store= as usual

Each operation is one hostccl HCCL call on the CPU tensor's own memory (docs/python.md lists the
operations, dtypes, copies, errors and timeouts). The communicator is bootstrapped through the
store torch hands the backend: rank 0 publishes HcclGetRootInfo's bytes, the others read them.
"""

import torch  # noqa: F401  (loads torch's C++ types before the extension)
import torch.distributed as _dist

from . import _c10d

ProcessGroupHostccl = _c10d.ProcessGroupHostccl

BACKEND_NAMES = []


def set_shared_allocator(min_bytes=1 << 20):
    """Where large CPU tensors live. The first hostccl group installs a torch CPU allocator that
    takes allocations of at least ``min_bytes`` (default 1 MiB) from aclrtMalloc: memory the other
    ranks on this host map, so collectives work on such tensors in place (several times faster
    than staging malloc'd memory). ``set_shared_allocator(0)`` before or after creating the group
    restores torch's allocator for new tensors. Caveat: that memory is a shared mapping, so a child
    made by fork() that writes a large tensor it inherited changes the parent's too."""
    _c10d.set_shared_allocator(int(min_bytes))


def _create(store, rank, world_size, timeout):
    return _c10d.create_process_group(store, rank, world_size, timeout)


def _register(name):
    upper = name.upper()
    if hasattr(_dist.Backend, upper) or upper in getattr(_dist.Backend, "_plugins", {}):
        return False
    _dist.Backend.register_backend(name, _create)
    BACKEND_NAMES.append(name)
    return True


_register("hostccl")
_register("hccl")  # scripts written for torch_npu's backend; skipped when torch knows the name
