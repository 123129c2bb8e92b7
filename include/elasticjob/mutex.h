// Mutex, MutexLock and CondVar: std::mutex and std::condition_variable with the capability
// annotations clang's thread-safety analysis checks (as leveldb's port::Mutex and
// port::CondVar); SharedMutex, ReaderMutexLock, WriterMutexLock: std::shared_mutex. A field
// shared between threads is ELASTICJOB_GUARDED_BY(mu_) with mu_ a Mutex, and the analysis
// proves every access holds it (every first-party target: cmake/ThreadSafety.cmake).
//
//   Mutex mu_;
//   int n_ ELASTICJOB_GUARDED_BY(mu_) = 0;
//   CondVar changed_{&mu_};
//
//   void Add() {
//     MutexLock lock(&mu_);
//     ++n_;
//     changed_.SignalAll();
//   }
//   void WaitPositive() {
//     MutexLock lock(&mu_);
//     while (n_ <= 0) changed_.Wait();  // a loop in the caller, which the analysis follows
//   }
#ifndef ELASTICJOB_MUTEX_H_
#define ELASTICJOB_MUTEX_H_

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>

#include "elasticjob/thread_annotations.h"

namespace elasticjob {

class ELASTICJOB_CAPABILITY("mutex") Mutex {
 public:
  Mutex() = default;
  Mutex(const Mutex&) = delete;
  Mutex& operator=(const Mutex&) = delete;

  void Lock() ELASTICJOB_ACQUIRE() { mu_.lock(); }
  void Unlock() ELASTICJOB_RELEASE() { mu_.unlock(); }
  bool TryLock() ELASTICJOB_TRY_ACQUIRE(true) { return mu_.try_lock(); }
  // Tells the analysis the caller holds it (no check at run time).
  void AssertHeld() ELASTICJOB_ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mu_;
};

// Holds `mu` for its scope; Unlock() and Lock() let a scope drop it for a while.
class ELASTICJOB_SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex* mu) ELASTICJOB_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~MutexLock() ELASTICJOB_RELEASE() {
    if (held_) mu_->Unlock();
  }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

  void Unlock() ELASTICJOB_RELEASE() {
    mu_->Unlock();
    held_ = false;
  }
  void Lock() ELASTICJOB_ACQUIRE() {
    mu_->Lock();
    held_ = true;
  }

 private:
  Mutex* const mu_;
  bool held_ = true;
};

// A reader-writer lock (std::shared_mutex): exclusive for writers, shared for readers.
class ELASTICJOB_CAPABILITY("shared_mutex") SharedMutex {
 public:
  SharedMutex() = default;
  SharedMutex(const SharedMutex&) = delete;
  SharedMutex& operator=(const SharedMutex&) = delete;

  void Lock() ELASTICJOB_ACQUIRE() { mu_.lock(); }
  void Unlock() ELASTICJOB_RELEASE() { mu_.unlock(); }
  void LockShared() ELASTICJOB_ACQUIRE_SHARED() { mu_.lock_shared(); }
  void UnlockShared() ELASTICJOB_RELEASE_SHARED() { mu_.unlock_shared(); }

 private:
  std::shared_mutex mu_;
};

// Holds `mu` exclusively for its scope.
class ELASTICJOB_SCOPED_CAPABILITY WriterMutexLock {
 public:
  explicit WriterMutexLock(SharedMutex* mu) ELASTICJOB_ACQUIRE(mu) : mu_(mu) { mu_->Lock(); }
  ~WriterMutexLock() ELASTICJOB_RELEASE() { mu_->Unlock(); }
  WriterMutexLock(const WriterMutexLock&) = delete;
  WriterMutexLock& operator=(const WriterMutexLock&) = delete;

 private:
  SharedMutex* const mu_;
};

// Holds `mu` shared for its scope.
class ELASTICJOB_SCOPED_CAPABILITY ReaderMutexLock {
 public:
  explicit ReaderMutexLock(SharedMutex* mu) ELASTICJOB_ACQUIRE_SHARED(mu) : mu_(mu) {
    mu_->LockShared();
  }
  ~ReaderMutexLock() ELASTICJOB_RELEASE() { mu_->UnlockShared(); }
  ReaderMutexLock(const ReaderMutexLock&) = delete;
  ReaderMutexLock& operator=(const ReaderMutexLock&) = delete;

 private:
  SharedMutex* const mu_;
};

// A condition variable bound to one Mutex, which the waits must hold. As leveldb's
// port::CondVar: the waits are not annotated (the analysis cannot tell that the caller's
// mutex is the one bound here), and there are no predicate overloads (it cannot see that a
// predicate runs under the lock), so callers loop: `while (!ready) cv.Wait();`.
class CondVar {
 public:
  explicit CondVar(Mutex* mu) : mu_(mu) {}
  CondVar(const CondVar&) = delete;
  CondVar& operator=(const CondVar&) = delete;

  void Wait() {
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // False when `deadline` passed first.
  template <typename Clock, typename Duration>
  bool WaitUntil(std::chrono::time_point<Clock, Duration> deadline) {
    std::unique_lock<std::mutex> lock(mu_->mu_, std::adopt_lock);
    const bool woken = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  // False when `timeout` passed first.
  template <typename Rep, typename Period>
  bool WaitFor(std::chrono::duration<Rep, Period> timeout) {
    return WaitUntil(std::chrono::steady_clock::now() + timeout);
  }
  void Signal() { cv_.notify_one(); }
  void SignalAll() { cv_.notify_all(); }

 private:
  Mutex* const mu_;
  std::condition_variable cv_;
};

}  // namespace elasticjob

#endif  // ELASTICJOB_MUTEX_H_
