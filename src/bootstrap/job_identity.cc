#include "bootstrap/job_identity.h"

#include <unistd.h>

#include "common/env.h"
#include "common/status.h"

namespace hostccl::boot {
namespace {

constexpr size_t kMaxJobIdBytes = 200;  // fits a RankInfo string (256)

// Bounded and printable, so it fits a RankInfo string and a log line.
std::string Clean(const std::string& s) {
  std::string out = s.substr(0, kMaxJobIdBytes);
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x21 || static_cast<unsigned char>(c) > 0x7e) c = '_';
  return out;
}

bool Get(Knob k, std::string* out) {
  auto v = EnvRaw(k);
  if (!v || v->empty()) return false;
  *out = *v;
  return true;
}

}  // namespace

std::string JobIdentity::Describe() const {
  if (empty()) return "no launcher job id";
  return source + "=" + id;
}

JobIdentity LauncherJobIdentity() {
  JobIdentity j;
  std::string v;
  if (Get(Knob::kJobId, &v)) {
    j.source = "HOSTCCL_JOB_ID";
    j.id = v;
  } else if (Get(Knob::kPmixNamespace, &v)) {
    j.source = "PMIX_NAMESPACE";
    j.id = v;
  } else if (Get(Knob::kOmpiJobId, &v) || Get(Knob::kOmpiOrteJobId, &v)) {
    j.source = "OMPI_MCA_ess_base_jobid";
    j.id = v;
  }
  std::string key;  // Open MPI's per-job random key: two mpiruns never share it
  if ((j.source == "PMIX_NAMESPACE" || j.source == "OMPI_MCA_ess_base_jobid") && Get(Knob::kOmpiJobKey, &key))
    j.id += "/" + key;
  if (!j.empty()) {
  } else if (Get(Knob::kTorchElasticRunId, &v) && v != "none") {
    j.source = "TORCHELASTIC_RUN_ID";
    j.id = v;
  } else if (Get(Knob::kSlurmJobId, &v)) {
    j.source = "SLURM_JOB_ID";
    std::string step;
    j.id = v + "." + (Get(Knob::kSlurmStepId, &step) ? step : std::string("0"));
  }
  j.id = Clean(j.id);
  return j;
}

std::string ThisProcessName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  return StrFormat("pid %d on host %s", static_cast<int>(getpid()), host[0] ? host : "?");
}

}  // namespace hostccl::boot
