#include "reg/client/registry_client.h"

namespace elasticjob::reg {

bool ServerAnswered(ClientCode code) {
  switch (code) {
    case ClientCode::kOk:
    case ClientCode::kNoNode:
    case ClientCode::kNodeExists:
    case ClientCode::kBadVersion:
    case ClientCode::kNotEmpty:
    case ClientCode::kNoChildrenForEphemerals:
    case ClientCode::kNoAuth:
      return true;
    default:
      return false;
  }
}

bool Retryable(ClientCode code) {
  return code == ClientCode::kConnectionLoss || code == ClientCode::kOperationTimeout ||
         code == ClientCode::kInvalidState || code == ClientCode::kSessionExpired ||
         code == ClientCode::kClosing;
}

int64_t SteadyNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool StepFailed(ClientCode code) { return code != ClientCode::kOk && code != ClientCode::kNotRun; }

std::string_view ClientCodeText(ClientCode code) {
  switch (code) {
    case ClientCode::kOk:
      return "ok";
    case ClientCode::kNoNode:
      return "no node";
    case ClientCode::kNodeExists:
      return "node exists";
    case ClientCode::kNotEmpty:
      return "not empty";
    case ClientCode::kBadVersion:
      return "bad version";
    case ClientCode::kNoChildrenForEphemerals:
      return "no children for ephemerals";
    case ClientCode::kNoAuth:
      return "not authenticated";
    case ClientCode::kAuthFailed:
      return "authentication failed";
    case ClientCode::kNotRun:
      return "not run";
    case ClientCode::kConnectionLoss:
      return "connection loss";
    case ClientCode::kOperationTimeout:
      return "operation timeout";
    case ClientCode::kSessionExpired:
      return "session expired";
    case ClientCode::kInvalidState:
      return "invalid zhandle state";
    case ClientCode::kClosing:
      return "zookeeper is closing";
    case ClientCode::kSessionMoved:
      return "session moved";
    case ClientCode::kOther:
      break;
  }
  return "other error";
}

}  // namespace elasticjob::reg
