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
