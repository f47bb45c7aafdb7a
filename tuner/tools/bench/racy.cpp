// The racy mode's loop (racy.hpp): for every dtype and --racy-sizes n, each variant launched
// --racy-trials times on one shared input, every result verified on its own; the table lists
// the wrong count and the first wrong value per variant and size.
#include "bench/racy.hpp"

#include "bench/measure_rows.hpp"
#include "bench/report.hpp"
#include "bench/variants.hpp"

#include "reducetune/errors.hpp"
#include "reducetune/measure/launch_sequence.hpp"

#include <cstdio>
#include <sstream>
#include <string>

namespace reducetune::bench {

int run_racy(const options &o, const device_info &device, compiler &comp) {
  std::ostringstream md;
  md << header(o, device, nullptr);
  md << "- mode: " << o.racy_trials
     << " runs of each variant per size, each verified on its own (uniform data; integers "
        "exact): a wrong count > 0 is a race observed\n\n";
  md << "| dtype | variant | label | n | runs | wrong | first wrong (expected -> got) |\n";
  md << "|---|---|---|---|--:|--:|---|\n";
  stream s;
  std::size_t total_wrong = 0;
  for (dtype t : o.dtypes) {
    auto variants = racy_variants(o, device, comp, t);
    for (int k : o.racy_sizes) {
      prepared_input in(t, o.op, 1ULL << k);
      for (auto &v : variants) {
        std::size_t wrong = 0;
        std::string example, failed;
        try {
          launch_sequence seq(*v.module, v.plan, t, in.load.input(), in.load.spec().n);
          for (std::size_t i = 0; i < o.racy_trials; ++i) {
            seq.enqueue(s.get());
            s.synchronize();
            if (const verdict vd = in.check(seq.result()); !vd.ok) {
              ++wrong;
              if (example.empty()) example = vd.expected + " -> " + vd.got;
            }
          }
        } catch (const error &e) {
          failed = std::string{"FAILED: "} + e.what();
        }
        total_wrong += wrong;
        md << "| " << to_string(t) << " | " << v.name << (v.flag.empty() ? "" : " (racy)") << " | "
           << v.label << " | 2^" << k << " | " << o.racy_trials << " | "
           << (failed.empty() ? std::to_string(wrong) : failed.substr(0, 160)) << " | " << example
           << " |\n";
        std::fprintf(stderr, "%s %s 2^%d: %zu wrong of %zu\n", to_string(t), v.name.c_str(), k,
                     wrong, o.racy_trials);
      }
    }
  }
  md << "\nTotal wrong results: " << total_wrong << "\n";
  emit(o, md.str());
  return 0;
}

} // namespace reducetune::bench
