// hostccl._hostccl: the package's thin binding of hostccl's public C API for NumPy arrays and
// other buffers (no torch needed).
//
// Contract
//  - version(), facts(): HostcclVersionString, the emulated device count, aclrtGetSocName,
//    the build type.
//  - get_root_info() -> bytes (HcclGetRootInfo); Communicator(root_info, rank, size,
//    exec_timeout_s=None) (HcclCommInitRootInfoConfig); Communicator.from_env()
//    (HostcclCommInitFromEnv). Each communicator owns one stream.
//  - Every operation takes C-contiguous writable buffers (NumPy arrays), enqueues the HCCL call on
//    the communicator's stream, releases the GIL and synchronizes: when it returns, the result is
//    in the output buffer. Counts come from the buffers (elements); dtypes from the NumPy dtype.
//  - Errors raise hostccl.HcclError(code, message) with hostccl's message (aclGetRecentErrMsg);
//    a failure found while running also carries HcclGetCommAsyncError's code.
//  - Example: 2 ranks, c.all_reduce(np.array([1., 2.], np.float32)) on rank 0 and
//    ([10., 20.]) on rank 1 -> both arrays become [11., 22.] (in place when recv is omitted).
#include <acl/acl.h>
#include <hccl/hccl.h>
#include <hccl/hccl_comm.h>
#include <hostccl/hostccl.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;

namespace {

#ifndef HOSTCCL_PY_BUILD_TYPE
#define HOSTCCL_PY_BUILD_TYPE "?"
#endif

PyObject* g_error = nullptr;  // hostccl.HcclError, set from Python at import

[[noreturn]] void Raise(int code, const std::string& what) {
  const char* m = aclGetRecentErrMsg();
  std::string msg = what + " failed (HCCL code " + std::to_string(code) + ")";
  if (m && *m) msg += ": " + std::string(m);
  if (g_error) {
    py::object err = py::reinterpret_borrow<py::object>(g_error)(code, msg);
    PyErr_SetObject(g_error, err.ptr());
    throw py::error_already_set();
  }
  throw std::runtime_error(msg);
}

void EnsureDevice(int32_t device) {
  thread_local int32_t tls_device = -1;
  if (tls_device == device) return;
  aclError rc = aclrtSetDevice(device);
  if (rc != ACL_SUCCESS) Raise(static_cast<int>(rc), "aclrtSetDevice");
  tls_device = device;
}

int32_t PickDevice(uint32_t rank) {
  uint32_t count = 0;
  if (aclrtGetDeviceCount(&count) != ACL_SUCCESS || count == 0) count = 1;
  const char* lr = std::getenv("LOCAL_RANK");
  uint32_t local = lr && *lr ? static_cast<uint32_t>(std::atoi(lr)) : rank;
  return static_cast<int32_t>(local % count);
}

HcclDataType DtypeOf(const py::buffer_info& b) {
  std::string f = b.format;
  if (!f.empty() && (f[0] == '<' || f[0] == '=' || f[0] == '@')) f = f.substr(1);
  if (f == "f") return HCCL_DATA_TYPE_FP32;
  if (f == "d") return HCCL_DATA_TYPE_FP64;
  if (f == "e") return HCCL_DATA_TYPE_FP16;
  if (f == "b") return HCCL_DATA_TYPE_INT8;
  if (f == "B" || f == "?") return HCCL_DATA_TYPE_UINT8;
  if (f == "h") return HCCL_DATA_TYPE_INT16;
  if (f == "H") return HCCL_DATA_TYPE_UINT16;
  if (f == "i" || (f == "l" && b.itemsize == 4)) return HCCL_DATA_TYPE_INT32;
  if (f == "I" || (f == "L" && b.itemsize == 4)) return HCCL_DATA_TYPE_UINT32;
  if (f == "q" || (f == "l" && b.itemsize == 8)) return HCCL_DATA_TYPE_INT64;
  if (f == "Q" || (f == "L" && b.itemsize == 8)) return HCCL_DATA_TYPE_UINT64;
  throw py::type_error("hostccl: buffer format '" + b.format + "' is not supported");
}

HcclReduceOp OpOf(const std::string& op) {
  if (op == "sum") return HCCL_REDUCE_SUM;
  if (op == "prod") return HCCL_REDUCE_PROD;
  if (op == "max") return HCCL_REDUCE_MAX;
  if (op == "min") return HCCL_REDUCE_MIN;
  throw py::value_error("hostccl: op must be 'sum', 'prod', 'max' or 'min', got '" + op + "'");
}

struct Buf {
  std::shared_ptr<py::buffer_info> hold;  // keeps the buffer exported while the call runs
  void* ptr;
  uint64_t count;
  HcclDataType dt;
  Buf(const py::buffer& b, bool writable)
      : hold(std::make_shared<py::buffer_info>(b.request(writable))) {
    const py::buffer_info& info = *hold;
    if (info.ndim > 0) {
      ssize_t expect = info.itemsize;
      for (ssize_t d = info.ndim - 1; d >= 0; --d) {
        if (info.shape[d] > 1 && info.strides[d] != expect)
          throw py::value_error("hostccl: buffers must be C-contiguous");
        expect *= info.shape[d];
      }
    }
    ptr = info.ptr;
    count = static_cast<uint64_t>(info.size);
    dt = DtypeOf(info);
  }
};

class Communicator {
 public:
  Communicator(py::bytes root_info, uint32_t rank, uint32_t size, py::object exec_timeout_s) {
    std::string bytes = root_info;
    if (bytes.size() != sizeof(HcclRootInfo))
      throw py::value_error("hostccl: root_info must be " + std::to_string(sizeof(HcclRootInfo)) +
                            " bytes (from get_root_info())");
    HcclRootInfo info;
    std::memcpy(&info, bytes.data(), sizeof(info));
    HcclCommConfig cfg;
    HcclCommConfigInit(&cfg);
    if (!exec_timeout_s.is_none()) cfg.hcclExecTimeOut = exec_timeout_s.cast<int32_t>();
    device_ = PickDevice(rank);
    EnsureDevice(device_);
    HcclResult r;
    {
      py::gil_scoped_release nogil;
      r = HcclCommInitRootInfoConfig(size, &info, rank, &cfg, &comm_);
    }
    if (r != HCCL_SUCCESS) Raise(r, "HcclCommInitRootInfoConfig");
    AllowHostBuffers();
    MakeStream();
  }
  explicit Communicator(HcclComm comm, int32_t device) : device_(device), comm_(comm) {
    AllowHostBuffers();
    MakeStream();
  }
  ~Communicator() { Close(); }

  // NumPy arrays live in host memory: this communicator accepts host buffers whatever
  // HOSTCCL_FIDELITY says (docs/python.md).
  void AllowHostBuffers() {
    HcclResult r = HostcclCommAllowHostBuffers(comm_);
    if (r != HCCL_SUCCESS) Raise(r, "HostcclCommAllowHostBuffers");
  }

  static std::unique_ptr<Communicator> FromEnv() {
    uint32_t rank = 0, size = 0;
    HostcclGetEnvRank(&rank, &size);
    HcclComm comm = nullptr;
    HcclResult r;
    {
      py::gil_scoped_release nogil;
      r = HostcclCommInitFromEnv(&comm);
    }
    if (r != HCCL_SUCCESS) Raise(r, "HostcclCommInitFromEnv");
    int32_t dev = 0;
    if (aclrtGetDevice(&dev) != ACL_SUCCESS) dev = PickDevice(rank);
    return std::make_unique<Communicator>(comm, dev);
  }

  void Close() {
    if (stream_) {
      aclrtSynchronizeStream(stream_);
      aclrtDestroyStream(stream_);
      stream_ = nullptr;
    }
    if (comm_) {
      HcclCommDestroy(comm_);
      comm_ = nullptr;
    }
  }

  uint32_t rank() const {
    uint32_t r = 0;
    HcclGetRankId(Live(), &r);
    return r;
  }
  uint32_t size() const {
    uint32_t s = 0;
    HcclGetRankSize(Live(), &s);
    return s;
  }

  // Runs call(stream) then synchronizes, without the GIL; raises on either failure.
  template <typename Call>
  void Run(const char* name, Call&& call) {
    HcclComm comm = Live();
    HcclResult r;
    aclError rc = ACL_SUCCESS;
    {
      py::gil_scoped_release nogil;
      EnsureDevice(device_);
      r = call(comm, stream_);
      if (r == HCCL_SUCCESS) rc = aclrtSynchronizeStream(stream_);
    }
    if (r != HCCL_SUCCESS) Raise(r, name);
    if (rc != ACL_SUCCESS) {
      HcclResult async = HCCL_SUCCESS;
      HcclGetCommAsyncError(comm, &async);
      Raise(async != HCCL_SUCCESS ? async : static_cast<int>(rc), name);
    }
  }

  void AllReduce(py::buffer send, py::object recv, const std::string& op) {
    Buf s(send, recv.is_none());
    Buf d = recv.is_none() ? s : Buf(recv.cast<py::buffer>(), true);
    SameShape(s, d, 1, "all_reduce");
    HcclReduceOp o = OpOf(op);
    Run("HcclAllReduce", [&](HcclComm c, aclrtStream st) {
      return HcclAllReduce(s.ptr, d.ptr, s.count, s.dt, o, c, st);
    });
  }
  void Reduce(py::buffer send, py::object recv, const std::string& op, uint32_t root) {
    Buf s(send, recv.is_none());
    Buf d = recv.is_none() ? s : Buf(recv.cast<py::buffer>(), true);
    SameShape(s, d, 1, "reduce");
    HcclReduceOp o = OpOf(op);
    Run("HcclReduce", [&](HcclComm c, aclrtStream st) {
      return HcclReduce(s.ptr, d.ptr, s.count, s.dt, o, root, c, st);
    });
  }
  void Broadcast(py::buffer buf, uint32_t root) {
    Buf b(buf, true);
    Run("HcclBroadcast", [&](HcclComm c, aclrtStream st) {
      return HcclBroadcast(b.ptr, b.count, b.dt, root, c, st);
    });
  }
  void AllGather(py::buffer send, py::buffer recv) {
    Buf s(send, false), d(recv, true);
    SameShape(s, d, size(), "all_gather");
    Run("HcclAllGather", [&](HcclComm c, aclrtStream st) {
      return HcclAllGather(s.ptr, d.ptr, s.count, s.dt, c, st);
    });
  }
  void ReduceScatter(py::buffer send, py::buffer recv, const std::string& op) {
    Buf s(send, false), d(recv, true);
    SameShape(d, s, size(), "reduce_scatter");
    HcclReduceOp o = OpOf(op);
    Run("HcclReduceScatter", [&](HcclComm c, aclrtStream st) {
      return HcclReduceScatter(s.ptr, d.ptr, d.count, s.dt, o, c, st);
    });
  }
  void AlltoAll(py::buffer send, py::buffer recv) {
    Buf s(send, false), d(recv, true);
    SameShape(s, d, 1, "all_to_all");
    uint32_t n = size();
    if (s.count % n != 0) throw py::value_error("hostccl: all_to_all: size not divisible by ranks");
    Run("HcclAlltoAll", [&](HcclComm c, aclrtStream st) {
      return HcclAlltoAll(s.ptr, s.count / n, s.dt, d.ptr, s.count / n, d.dt, c, st);
    });
  }
  void Scatter(py::object send, py::buffer recv, uint32_t root) {
    Buf d(recv, true);
    void* sp = nullptr;
    std::unique_ptr<Buf> s;
    if (!send.is_none()) {
      s = std::make_unique<Buf>(send.cast<py::buffer>(), false);
      sp = s->ptr;
    }
    Run("HcclScatter", [&](HcclComm c, aclrtStream st) {
      return HcclScatter(sp, d.ptr, d.count, d.dt, root, c, st);
    });
  }
  void Send(py::buffer send, uint32_t dst) {
    Buf s(send, false);
    Run("HcclSend", [&](HcclComm c, aclrtStream st) {
      return HcclSend(s.ptr, s.count, s.dt, dst, c, st);
    });
  }
  void Recv(py::buffer recv, uint32_t src) {
    Buf d(recv, true);
    Run("HcclRecv", [&](HcclComm c, aclrtStream st) {
      return HcclRecv(d.ptr, d.count, d.dt, src, c, st);
    });
  }
  void Barrier() {
    Run("HcclBarrier", [&](HcclComm c, aclrtStream st) { return HcclBarrier(c, st); });
  }

 private:
  HcclComm Live() const {
    if (!comm_) throw std::runtime_error("hostccl: the communicator is closed");
    return comm_;
  }
  void MakeStream() {
    EnsureDevice(device_);
    aclError rc = aclrtCreateStream(&stream_);
    if (rc != ACL_SUCCESS) Raise(static_cast<int>(rc), "aclrtCreateStream");
  }
  // big.count == small.count * factor and equal dtypes.
  static void SameShape(const Buf& small, const Buf& big, uint64_t factor, const char* what) {
    if (small.dt != big.dt) throw py::type_error(std::string("hostccl: ") + what + ": dtypes differ");
    if (big.count != small.count * factor)
      throw py::value_error(std::string("hostccl: ") + what + ": the buffers hold " +
                            std::to_string(small.count) + " and " + std::to_string(big.count) +
                            " elements, expected a factor of " + std::to_string(factor));
  }

  int32_t device_ = 0;
  HcclComm comm_ = nullptr;
  aclrtStream stream_ = nullptr;
};

}  // namespace

PYBIND11_MODULE(_hostccl, m) {
  m.doc() = "hostccl's C API for NumPy arrays and buffers";
  m.def("_set_error_class", [](py::object cls) {
    Py_XINCREF(cls.ptr());
    g_error = cls.ptr();
  });
  m.def("version", [] { return std::string(HostcclVersionString()); });
  m.def("facts", [] {
    py::dict d;
    d["version"] = std::string(HostcclVersionString());
    uint32_t devices = 0;
    d["devices"] = aclrtGetDeviceCount(&devices) == ACL_SUCCESS ? py::object(py::int_(devices)) : py::none();
    const char* soc = aclrtGetSocName();
    d["soc"] = soc ? py::object(py::str(soc)) : py::none();
    d["build_type"] = HOSTCCL_PY_BUILD_TYPE;
    return d;
  });
  m.def("get_root_info", [] {
    HcclRootInfo info;
    HcclResult r = HcclGetRootInfo(&info);
    if (r != HCCL_SUCCESS) Raise(r, "HcclGetRootInfo");
    return py::bytes(reinterpret_cast<const char*>(&info), sizeof(info));
  });
  py::class_<Communicator>(m, "Communicator")
      .def(py::init<py::bytes, uint32_t, uint32_t, py::object>(), py::arg("root_info"),
           py::arg("rank"), py::arg("size"), py::arg("exec_timeout_s") = py::none())
      .def_static("from_env", &Communicator::FromEnv)
      .def_property_readonly("rank", &Communicator::rank)
      .def_property_readonly("size", &Communicator::size)
      .def("close", &Communicator::Close)
      .def("all_reduce", &Communicator::AllReduce, py::arg("send"), py::arg("recv") = py::none(),
           py::arg("op") = "sum")
      .def("reduce", &Communicator::Reduce, py::arg("send"), py::arg("recv") = py::none(),
           py::arg("op") = "sum", py::arg("root") = 0)
      .def("broadcast", &Communicator::Broadcast, py::arg("buf"), py::arg("root") = 0)
      .def("all_gather", &Communicator::AllGather, py::arg("send"), py::arg("recv"))
      .def("reduce_scatter", &Communicator::ReduceScatter, py::arg("send"), py::arg("recv"),
           py::arg("op") = "sum")
      .def("all_to_all", &Communicator::AlltoAll, py::arg("send"), py::arg("recv"))
      .def("scatter", &Communicator::Scatter, py::arg("send"), py::arg("recv"),
           py::arg("root") = 0)
      .def("send", &Communicator::Send, py::arg("buf"), py::arg("dst"))
      .def("recv", &Communicator::Recv, py::arg("buf"), py::arg("src"))
      .def("barrier", &Communicator::Barrier);
}
