#include "reg/write_pipeline.h"

#include <iterator>
#include <memory>
#include <utility>

namespace elasticjob::reg {

WritePipeline::WritePipeline(RegistryClient& client, Hooks hooks)
    : client_(client), hooks_(std::move(hooks)) {}

WritePipeline::~WritePipeline() {
  MutexLock lock(&mu_);
  for (Pending* p : queued_) delete p;  // none when the client answered everything sent
  queued_.clear();
}

size_t WritePipeline::queued() {
  MutexLock lock(&mu_);
  return queued_.size();
}

void WritePipeline::Send(std::span<const ClientOp> steps, Done done) {
  auto* p = new Pending{steps, std::move(done)};
  {
    MutexLock lock(&mu_);
    if (in_flight_) {
      queued_.push_back(p);
      return;
    }
    in_flight_ = true;
  }
  SendSingle(p, /*ends_batch=*/true);
}

void WritePipeline::Answered(int64_t sent_ns, uint64_t epoch, ClientCode rc) {
  if (hooks_.answered && ServerAnswered(rc)) hooks_.answered(sent_ns, epoch);
}

void WritePipeline::SendSingle(Pending* p, bool ends_batch) {
  if (hooks_.before_send) hooks_.before_send();
  auto seq = std::make_shared<std::atomic<uint64_t>>(0);
  const int64_t sent_ns = SteadyNs();
  const uint64_t epoch = client_.session_epoch();
  // Once handed over, `p` belongs to the callback, which the client calls exactly once (also
  // when the handle closes, or before Multi returns when it refuses the request).
  hooks_.numbered(seq.get(), [&] {
    client_.Multi(std::vector<ClientOp>(p->steps.begin(), p->steps.end()),
                  [this, p, seq, sent_ns, epoch, ends_batch](ClientCode rc,
                                                             std::vector<ClientOpResult> results) {
                    std::unique_ptr<Pending> owned(p);
                    Answered(sent_ns, epoch, rc);
                    owned->done(rc, std::move(results), seq->load(std::memory_order_acquire));
                    if (ends_batch) NextBatch();
                  });
  });
}

void WritePipeline::SendBatch(std::vector<Pending*> members, bool ends_batch) {
  if (members.size() == 1) return SendSingle(members.front(), ends_batch);
  std::vector<ClientOp> steps;
  size_t n = 0;
  for (const Pending* m : members) n += m->steps.size();
  steps.reserve(n);
  for (const Pending* m : members) steps.insert(steps.end(), m->steps.begin(), m->steps.end());
  if (hooks_.before_send) hooks_.before_send();
  auto seq = std::make_shared<std::atomic<uint64_t>>(0);
  const int64_t sent_ns = SteadyNs();
  const uint64_t epoch = client_.session_epoch();
  hooks_.numbered(seq.get(), [&] {
    client_.Multi(std::move(steps),
                  [this, members = std::move(members), seq, sent_ns, epoch, ends_batch](
                      ClientCode rc, std::vector<ClientOpResult> results) mutable {
                    Answered(sent_ns, epoch, rc);
                    BatchAnswered(members, rc, std::move(results),
                                  seq->load(std::memory_order_acquire), ends_batch);
                  });
  });
}

void WritePipeline::BatchAnswered(std::vector<Pending*>& members, ClientCode rc,
                                  std::vector<ClientOpResult> results, uint64_t seq,
                                  bool ends_batch) {
  if (rc == ClientCode::kOk || Retryable(rc)) {
    // All applied, or the connection went: each member's outcome is the batch's.
    size_t op = 0;
    for (Pending* m : members) {
      std::unique_ptr<Pending> owned(m);
      const size_t n = m->steps.size();
      std::vector<ClientOpResult> own;
      if (rc == ClientCode::kOk && op + n <= results.size()) {
        own.assign(std::make_move_iterator(results.begin() + static_cast<long>(op)),
                   std::make_move_iterator(results.begin() + static_cast<long>(op + n)));
      }
      op += n;
      owned->done(rc, std::move(own), seq);
    }
    if (ends_batch) NextBatch();
    return;
  }
  // One member failed and took the others down with it (see the header).
  size_t failing = members.size();
  for (size_t k = 0, op = 0; k < members.size() && failing == members.size(); ++k) {
    for (size_t n = members[k]->steps.size(); n > 0; --n, ++op) {
      if (op < results.size() && StepFailed(results[op].code)) {
        failing = k;
        break;
      }
    }
  }
  size_t alone_from = 0;  // no step to blame: each alone
  if (failing < members.size()) {
    if (failing > 0) {
      SendBatch({members.begin(), members.begin() + static_cast<long>(failing)},
                /*ends_batch=*/false);
    }
    alone_from = failing;
  }
  for (size_t k = alone_from; k < members.size(); ++k) {
    SendSingle(members[k], /*ends_batch=*/false);
  }
  if (ends_batch) NextBatch();
}

void WritePipeline::NextBatch() {
  std::vector<Pending*> next;
  {
    MutexLock lock(&mu_);
    size_t ops = 0;
    while (!queued_.empty() &&
           (next.empty() || ops + queued_.front()->steps.size() <= kMaxBatchOps)) {
      ops += queued_.front()->steps.size();
      next.push_back(queued_.front());
      queued_.pop_front();
    }
    if (next.empty()) {
      in_flight_ = false;
      return;
    }
  }
  SendBatch(std::move(next), /*ends_batch=*/true);
}

}  // namespace elasticjob::reg
