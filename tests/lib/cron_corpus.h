// A generated corpus of Quartz cron expressions, zones and start instants: the distribution
// the Quartz differential test draws from (tests/integration/schedule/
// cron_quartz_differential_test.cc) and the cron benchmarks' mix (bench/cron_mix_bench.cc).
// Typical fields, L/W/#, years, DST seasons and zones, and mutations that are often invalid.
//
// Thread safety: a Gen is not thread-safe; one per thread.
#ifndef ELASTICJOB_TESTS_LIB_CRON_CORPUS_H_
#define ELASTICJOB_TESTS_LIB_CRON_CORPUS_H_

#include <cctype>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

// GCC 12 at -O2 warns falsely about `"*/" + std::to_string(...)` (GCC bug 105329); the
// expressions stay as they are because their evaluation order is the corpus.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#endif

namespace elasticjob::testing {

class Gen {
 public:
  explicit Gen(uint32_t seed) : rng_(seed) {}

  int Int(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int>(v.size()) - 1))];
  }

  std::string Numeric(int lo, int hi) {
    switch (Int(0, 9)) {
      case 0:
        return "*";
      case 1:
        return std::to_string(Int(lo, hi));
      case 2:
        return std::to_string(Int(lo, hi)) + "-" + std::to_string(Int(lo, hi));
      case 3:
        return std::to_string(Int(lo, hi)) + "/" + std::to_string(Int(1, hi - lo + 1));
      case 4:
        return "*/" + std::to_string(Int(1, hi - lo + 1));
      case 5:
        return std::to_string(Int(lo, hi)) + "-" + std::to_string(Int(lo, hi)) + "/" +
               std::to_string(Int(1, 9));
      case 6: {
        std::string s = std::to_string(Int(lo, hi));
        for (int k = Int(1, 3); k > 0; --k) s += "," + std::to_string(Int(lo, hi));
        return s;
      }
      case 7:
        return std::to_string(Int(lo, hi)) + "," + Numeric(lo, hi);
      case 8:
        return std::to_string(lo);
      default:
        return std::to_string(Int(lo, hi)) + "-" + std::to_string(hi);
    }
  }

  std::string Month() {
    static const std::vector<std::string> kNames = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                                    "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
    switch (Int(0, 5)) {
      case 0:
        return Pick(kNames);
      case 1:
        return Pick(kNames) + "-" + Pick(kNames);
      case 2:
        return Pick(kNames) + "," + Pick(kNames);
      case 3:
      case 4:
        return "*";
      default:
        return Numeric(1, 12);
    }
  }

  std::string DayOfMonth() {
    switch (Int(0, 11)) {
      case 0:
        return "L";
      case 1:
        return "L-" + std::to_string(Int(0, 30));
      case 2:
        return "LW";
      case 3:
        return std::to_string(Int(1, 31)) + "W";
      case 4:
      case 5:
        return "*";
      case 6:
        return std::to_string(Int(28, 31));
      case 7:
        return "L-" + std::to_string(Int(1, 5)) + "W";
      default:
        return Numeric(1, 31);
    }
  }

  std::string DayOfWeek() {
    static const std::vector<std::string> kNames = {"SUN", "MON", "TUE", "WED",
                                                    "THU", "FRI", "SAT"};
    switch (Int(0, 11)) {
      case 0:
        return std::to_string(Int(1, 7)) + "L";
      case 1:
        return std::to_string(Int(1, 7)) + "#" + std::to_string(Int(1, 5));
      case 2:
        return Pick(kNames) + "#" + std::to_string(Int(1, 5));
      case 3:
        return Pick(kNames) + "-" + Pick(kNames);
      case 4:
        return Pick(kNames);
      case 5:
        return "L";
      case 6:
        return "MON-FRI";
      case 7:
        return Pick(kNames) + "L";
      case 8:
        return "*";
      default:
        return Numeric(1, 7);
    }
  }

  std::string Year() {
    switch (Int(0, 9)) {
      case 0:
        return " *";
      case 1:
        return " " + std::to_string(Int(2020, 2040));
      case 2:
        return " " + std::to_string(Int(2024, 2030)) + "-" + std::to_string(Int(2030, 2045));
      case 3:
        return " " + std::to_string(Int(2025, 2030)) + "/" + std::to_string(Int(1, 4));
      case 4:
        return " 2200";
      default:
        return "";
    }
  }

  std::string Hour() {
    if (Chance(0.3)) return Pick(std::vector<std::string>{"1", "2", "3", "0", "23", "1-3", "2/1"});
    return Numeric(0, 23);
  }

  std::string Expression() {
    std::string sec = Chance(0.5) ? "0" : Numeric(0, 59);
    std::string min =
        Chance(0.3) ? Pick(std::vector<std::string>{"0", "30", "15", "45"}) : Numeric(0, 59);
    std::string dom, dow;
    if (Chance(0.5)) {
      dom = DayOfMonth();
      dow = "?";
    } else {
      dom = "?";
      dow = DayOfWeek();
    }
    std::string e = sec + " " + min + " " + Hour() + " " + dom + " " + Month() + " " + dow + Year();
    if (Chance(0.15)) e = Mutate(e);
    if (Chance(0.05)) {  // lower case is accepted
      for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    return e;
  }

  std::string Mutate(std::string e) {
    static const std::string kChars = "0123456789*?/-,#LW LWX\t";
    int k = Int(0, 4);
    size_t pos = static_cast<size_t>(Int(0, static_cast<int>(e.size()) - 1));
    switch (k) {
      case 0:
        e[pos] = kChars[static_cast<size_t>(Int(0, static_cast<int>(kChars.size()) - 1))];
        break;
      case 1:
        e.erase(pos, 1);
        break;
      case 2:
        e.insert(pos, 1, kChars[static_cast<size_t>(Int(0, static_cast<int>(kChars.size()) - 1))]);
        break;
      case 3:
        e += " 1 2";
        break;
      default:
        e.insert(pos, "5");
        break;
    }
    return e;
  }

  std::string Zone() {
    static const std::vector<std::string> kZones = {"UTC",
                                                    "Asia/Shanghai",
                                                    "America/New_York",
                                                    "Europe/London",
                                                    "Europe/Berlin",
                                                    "Australia/Sydney",
                                                    "America/Sao_Paulo",
                                                    "Asia/Kolkata",
                                                    "Pacific/Chatham",
                                                    "Europe/Dublin",
                                                    "America/St_Johns",
                                                    "Pacific/Apia",
                                                    "Australia/Lord_Howe",
                                                    "America/Santiago",
                                                    "Asia/Tehran",
                                                    "GMT+08:00",
                                                    "GMT-03:30",
                                                    "America/Los_Angeles",
                                                    "Europe/Moscow",
                                                    "America/Havana"};
    return Pick(kZones);
  }

  // Epoch ms, biased to DST transition seasons and to whole seconds.
  int64_t From() {
    int year = Chance(0.1) ? Int(2038, 2060) : Int(2000, 2036);
    int month = Chance(0.6) ? Pick(std::vector<int>{3, 4, 9, 10, 11}) : Int(1, 12);
    int day = Int(1, 28);
    int64_t days = DaysFromCivil(year, month, day);
    int64_t secs = days * 86400 + Int(0, 86399) - Int(-14, 14) * 3600;
    int64_t ms = secs * 1000;
    if (Chance(0.2)) ms += Int(1, 999);
    return ms;
  }

  static int64_t DaysFromCivil(int y, int m, int d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
  }

 private:
  std::mt19937 rng_;
};

}  // namespace elasticjob::testing

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif  // ELASTICJOB_TESTS_LIB_CRON_CORPUS_H_
