#include "infra/thread_name.h"

#include <pthread.h>

namespace elasticjob::infra {

void NameThisThread(std::string_view name) {
  constexpr size_t kMax = 15;  // the kernel's TASK_COMM_LEN, less the terminating NUL
  const std::string cut(name.substr(0, kMax));
  pthread_setname_np(pthread_self(), cut.c_str());  // only ERANGE, avoided above
}

std::string ThisThreadName() {
  char name[16] = {0};
  pthread_getname_np(pthread_self(), name, sizeof(name));
  return name;
}

}  // namespace elasticjob::infra
