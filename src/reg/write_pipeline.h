// WritePipeline: the registry's asynchronous transactions over the client seam
// (reg/client/registry_client.h), batched. An idle pipeline hands a transaction to the client
// at once; transactions sent while a multi-op is on its way gather, and leave together as one
// multi-op once it is answered (up to kMaxBatchOps steps each): a thousand jobs firing in the
// same millisecond cost the server a few writes, not two thousand (docs/registry.md,
// "Writes").
//
// A multi-op is all or nothing, so one failing member of a batch fails the others with it.
// The pipeline then sends again, at once: the members before the failing one together, the
// failing one alone (for its own outcome), and each member after it alone (any of them may
// fail too; alone, it takes no other down), then the next batch. The order on the wire stays
// the order sent, and a batch with many failing members costs one more round trip, not one
// per failure.
//
// Each transaction is answered exactly once, with its own outcome as if sent alone: the
// client's code (kOk, a step's failure, or the connection's or session's end), its steps'
// results (kOk: one per step; a failure: those of the multi-op that carried it alone, or
// none), and the request number it last went out with (Hooks::numbered). Answers run on
// the client's event thread (or on the sending thread when the client refused the request
// at once) and must not block: the registry posts the rest of its work to an executor.
//
// Thread safety: Send may be called from any thread, answers included. One lock
// (`mu_`), never held while calling the client or a callback.
#ifndef ELASTICJOB_REG_WRITE_PIPELINE_H_
#define ELASTICJOB_REG_WRITE_PIPELINE_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <span>
#include <vector>

#include "elasticjob/mutex.h"
#include "reg/client/registry_client.h"

namespace elasticjob::reg {

class WritePipeline {
 public:
  // Well under the server's 1 MB request limit (jute.maxbuffer) for the layout's nodes.
  static constexpr size_t kMaxBatchOps = 1000;

  struct Hooks {
    // Hands a multi-op over: runs `send` (the client's Multi) and sets `*seq` to the number
    // the request took as it left (the registry's order of requests, for read-your-writes: a
    // read numbered after it left after it, and shows it), before it can be answered; leaves
    // it 0 when the client refused the request. Required.
    std::function<void(std::atomic<uint64_t>* seq, const std::function<void()>& send)> numbered;
    // The server answered a multi-op handed over at `sent_ns` (steady clock) in session
    // `epoch` (the registry's lease). Optional.
    std::function<void(int64_t sent_ns, uint64_t epoch)> answered;
    // Runs on the sending thread before each multi-op is handed over (a test seam: a test
    // ends the session from it). Optional.
    std::function<void()> before_send;
  };
  using Done =
      std::function<void(ClientCode rc, std::vector<ClientOpResult> results, uint64_t seq)>;

  // `client` must outlive the pipeline, and must have answered every transaction sent
  // (Close answers what it owed) before the pipeline is destroyed.
  WritePipeline(RegistryClient& client, Hooks hooks);
  ~WritePipeline();
  WritePipeline(const WritePipeline&) = delete;
  WritePipeline& operator=(const WritePipeline&) = delete;

  // Sends the transaction `steps` (not empty). `steps` must stay valid, unchanged, until
  // `done` has been called: the pipeline refers to them rather than copying them (the
  // client copies what it sends).
  void Send(std::span<const ClientOp> steps, Done done);

  // Transactions waiting for the multi-op on its way (for tests and diagnostics).
  size_t queued();

 private:
  struct Pending {
    std::span<const ClientOp> steps;
    Done done;
  };
  // Hands `members` to the client as one multi-op (one member: its own steps). `ends_batch`:
  // it is the multi-op in flight, whose answer sends the next batch.
  void SendBatch(std::vector<Pending*> members, bool ends_batch);
  void SendSingle(Pending* p, bool ends_batch);
  // A merged multi-op's answer: each member's outcome, or the failure split (above).
  void BatchAnswered(std::vector<Pending*>& members, ClientCode rc,
                     std::vector<ClientOpResult> results, uint64_t seq, bool ends_batch);
  // The next batch, once the one in flight has its answer.
  void NextBatch();
  void Answered(int64_t sent_ns, uint64_t epoch, ClientCode rc);

  RegistryClient& client_;
  const Hooks hooks_;
  Mutex mu_;
  bool in_flight_ ELASTICJOB_GUARDED_BY(mu_) = false;
  std::deque<Pending*> queued_ ELASTICJOB_GUARDED_BY(mu_);  // owned
};

}  // namespace elasticjob::reg

#endif  // ELASTICJOB_REG_WRITE_PIPELINE_H_
