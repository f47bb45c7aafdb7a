// The results store, the Catalog and export, with rows as flat dicts (one key per column).
#include "common.hpp"
#include "py_point.hpp"
#include "store_dicts.hpp"

#include "reducetune/db/axis_picks.hpp"
#include "reducetune/db/catalog.hpp"
#include "reducetune/db/export.hpp"
#include "reducetune/db/point_records.hpp"
#include "reducetune/db/schema.hpp"
#include "reducetune/db/store.hpp"
#include "reducetune/jit/variant_request.hpp"
#include "reducetune/verify/patterns.hpp"

#include <memory>

namespace rtpy {
namespace {

// The row of a measurement of point pt: the point's facts from the space (labels, compile
// and launch parameters, flags, determinism), the measurement's from the dict.
db::measurement_record measurement_of(const py_point &pt, const nb::dict &d) {
  db::measurement_record m;
  m.variant = db::variant_record_of(*pt.space, pt.p);
  m.launch_label = pt.launch_label();
  m.launch_parameters_json = db::launch_parameters_json(*pt.space, pt.p);
  m.device_id = nb::cast<std::int64_t>(d["device_id"]);
  m.workload = workload_of(d);
  if (m.workload.dtype != m.variant.dtype || m.workload.op != m.variant.op)
    throw rt::invalid_configuration("point " + m.variant.label + " recorded for a " +
                                    m.workload.dtype + "." + m.workload.op + " workload");
  m.template_hash = get_or<std::string>(d, "template_hash", "");
  m.driver_version = get_or<int>(d, "driver_version", 0);
  m.toolkit_version = get_or<int>(d, "toolkit_version", 0);
  m.study_id = get_or<std::optional<std::int64_t>>(d, "study_id", std::nullopt);
  m.samples_s = get_or<std::vector<double>>(d, "samples_s", {});
  m.gbps = get_or<std::optional<double>>(d, "gbps", std::nullopt);
  m.pct_of_peak = get_or<std::optional<double>>(d, "pct_of_peak", std::nullopt);
  m.pct_of_ceiling = get_or<std::optional<double>>(d, "pct_of_ceiling", std::nullopt);
  m.status = db::parse_measurement_status(get_or<std::string>(d, "status", "ok"));
  m.reason = get_or<std::string>(d, "reason", "");
  m.created_at = get_or<std::string>(d, "created_at", "");
  return m;
}

// The point a row describes, as a measurement and a best choice both report it: the variant's
// family, label and facts, then its launch config. Either row's dict starts from this one.
nb::dict point_dict(const db::variant_record &v, const std::string &launch_label,
                    const std::string &launch_parameters_json) {
  nb::dict d;
  d["family"] = v.family;
  d["variant_label"] = v.label;
  d["parameters_json"] = v.parameters_json;
  d["flags_json"] = v.flags_json;
  d["determinism"] = v.determinism;
  d["launch_label"] = launch_label;
  d["launch_parameters_json"] = launch_parameters_json;
  return d;
}

nb::dict measurement_dict(const db::measurement_record &m) {
  nb::dict d = point_dict(m.variant, m.launch_label, m.launch_parameters_json);
  d["id"] = m.id;
  d["device_id"] = m.device_id;
  put_workload(d, m.workload);
  d["template_hash"] = m.template_hash;
  d["driver_version"] = m.driver_version;
  d["toolkit_version"] = m.toolkit_version;
  d["study_id"] = m.study_id;
  d["samples_s"] = m.samples_s;
  d["count"] = m.stats ? m.stats->count : 0;
  d["median_s"] = m.stats ? std::optional<double>(m.stats->median_s) : std::nullopt;
  d["min_s"] = m.stats ? std::optional<double>(m.stats->min_s) : std::nullopt;
  d["rel_stddev"] = m.stats ? std::optional<double>(m.stats->rel_stddev) : std::nullopt;
  d["gbps"] = m.gbps;
  d["pct_of_peak"] = m.pct_of_peak;
  d["pct_of_ceiling"] = m.pct_of_ceiling;
  d["status"] = std::string(db::to_string(m.status));
  d["reason"] = m.reason;
  d["created_at"] = m.created_at;
  return d;
}

nb::dict best_dict(const db::best_choice &b) {
  nb::dict d = point_dict(b.variant, b.launch_label, b.launch_parameters_json);
  d["measurement_id"] = b.measurement_id;
  d["requested_n"] = b.requested_n;
  d["bucket_n"] = b.bucket_n;
  d["bucket_shape"] = shape_tuple_of(b.bucket_shape()); // (1, bucket_n, 1) for the whole array
  d["dtype"] = b.variant.dtype;
  d["op"] = b.variant.op;
  d["median_s"] = b.median_s;
  d["gbps"] = b.gbps;
  d["pct_of_peak"] = b.pct_of_peak;
  return d;
}

// Lowered names of a point whose build the file does not keep: compiled here with NVRTC (the
// process's compiler, so each variant once per process). A point that does not compile keeps
// empty names: the export is still right about everything else.
std::map<std::string, std::string> compile_lowered(const rt::search_space &s, const rt::point &p,
                                                   int arch) {
  try {
    return shared_compiler().compile(rt::request_for(s.decl(), p.compile, arch))->lowered;
  } catch (const rt::error &) {
    return {};
  }
}

// A store that can be closed explicitly (tests, and so a file can be moved on Windows-like
// file systems); every call after close() raises StoreError.
class py_store {
public:
  py_store(const std::string &path, bool read_only)
      : m_store(std::make_unique<db::store>(read_only ? db::store::open_read_only(path)
                                                      : db::store::open(path))) {}
  db::store &get() {
    if (!m_store)
      throw reducetune::store_error("the store is closed");
    return *m_store;
  }
  void close() { m_store.reset(); }

private:
  std::unique_ptr<db::store> m_store;
};

// The Store's file, devices, templates and studies.
void bind_store_file(nb::class_<py_store> &c) {
  c.def(nb::init<const std::string &, bool>(), nb::arg("path"), nb::arg("read_only") = false,
           "Opens (creating, or migrating after keeping a copy) a results file; read_only: "
           "never writes it (an older file is migrated in memory). StoreError for a corrupt, "
           "foreign or newer file, which is left untouched.")
      .def("close", &py_store::close)
      .def_prop_ro("migration",
                   [](py_store &s) -> nb::object {
                     const auto &m = s.get().migration();
                     if (!m)
                       return nb::none();
                     nb::dict d;
                     d["from_version"] = m->from_version;
                     d["to_version"] = m->to_version;
                     d["backup"] = m->backup.string();
                     return d;
                   },
                   "{from_version, to_version, backup} when opening migrated the file.")
      .def_prop_ro("path", [](py_store &s) { return s.get().path().string(); })
      .def("schema_version", [](py_store &s) { return s.get().schema_version(); })
      .def("integrity_check", [](py_store &s) { return s.get().integrity_check(); })
      .def("register_device",
           [](py_store &s, const nb::dict &d) { return s.get().register_device(device_of(d)); })
      .def("find_device",
           [](py_store &s, const std::string &uuid) -> nb::object {
             const auto r = s.get().find_device(uuid);
             return r ? nb::object(device_dict(*r)) : nb::none();
           })
      .def("devices", [](py_store &s) { return list_of(s.get().devices(), device_dict); })
      .def("register_template", [](py_store &s, const std::string &family,
                                   const std::string &hash) {
        return s.get().register_template(family, hash);
      })
      .def("create_study",
           [](py_store &s, const nb::dict &d) {
             db::study_record r;
             r.name = nb::cast<std::string>(d["name"]);
             r.device_id = get_or<std::optional<std::int64_t>>(d, "device_id", std::nullopt);
             r.dtype = get_or<std::string>(d, "dtype", "");
             r.op = get_or<std::string>(d, "op", "");
             r.strategy = get_or<std::string>(d, "strategy", "");
             r.config_json = get_or<std::string>(d, "config_json", "{}");
             return s.get().create_study(r);
           });
}

// The Store's measurements and baselines.
void bind_store_rows(nb::class_<py_store> &c) {
  c.def(
          "record_measurement",
          [](py_store &s, const py_point &p, const nb::dict &d) {
            return s.get().record_measurement(measurement_of(p, d));
          },
          nb::arg("point"), nb::arg("row"),
          "Records one measurement of a point (row: device_id, the workload, template_hash, "
          "driver/toolkit versions, study_id, samples_s, status, reason, gbps, ...).")
      .def(
          "find_measurement",
          [](py_store &s, const nb::dict &d) -> nb::object {
            const auto m = s.get().find_measurement(key_of(d));
            return m ? nb::object(measurement_dict(*m)) : nb::none();
          },
          nb::arg("key"), "The row measured in exactly this context, or None.")
      .def("is_measured",
           [](py_store &s, const nb::dict &d) { return s.get().is_measured(key_of(d)); })
      .def("record_baseline",
           [](py_store &s, const nb::dict &d) {
             db::baseline_record b;
             b.device_id = nb::cast<std::int64_t>(d["device_id"]);
             b.workload = workload_of(d);
             b.kind = nb::cast<std::string>(d["kind"]);
             b.driver_version = get_or<int>(d, "driver_version", 0);
             b.toolkit_version = get_or<int>(d, "toolkit_version", 0);
             b.samples_s = nb::cast<std::vector<double>>(d["samples_s"]);
             b.gbps = get_or<double>(d, "gbps", 0.0);
             return s.get().record_baseline(b);
           })
      .def("find_baseline",
           [](py_store &s, std::int64_t device_id, const nb::dict &w,
              const std::string &kind) -> nb::object {
             const auto b = s.get().find_baseline(device_id, workload_of(w), kind);
             if (!b)
               return nb::none();
             nb::dict d;
             d["kind"] = b->kind;
             d["median_s"] = b->median_s;
             d["gbps"] = b->gbps;
             d["samples_s"] = b->samples_s;
             put_workload(d, b->workload);
             return d;
           });
}

// The Store's answers: best (by size, or by problem), history (by size, or by shape), merge.
void bind_store_queries(nb::class_<py_store> &c) {
  c.def(
          "best",
          [](py_store &s, std::int64_t device_id, const std::string &dtype, const std::string &op,
             std::uint64_t n, bool allow_flagged, bool nondeterministic) -> nb::object {
            const auto b = s.get().best(device_id, dtype, op, n, {allow_flagged, !nondeterministic});
            return b ? nb::object(best_dict(*b)) : nb::none();
          },
          nb::arg("device_id"), nb::arg("dtype"), nb::arg("op"), nb::arg("n"),
          nb::arg("allow_flagged") = false, nb::arg("nondeterministic") = false)
      .def(
          "best_for",
          [](py_store &s, std::int64_t device_id, const rt::problem &p, bool allow_flagged,
             bool nondeterministic) -> nb::object {
            const auto b = s.get().best(device_id, p, {allow_flagged, !nondeterministic});
            return b ? nb::object(best_dict(*b)) : nb::none();
          },
          nb::arg("device_id"), nb::arg("problem"), nb::arg("allow_flagged") = false,
          nb::arg("nondeterministic") = false,
          "best for a Problem: the whole array as best; another shape at the measured shape "
          "that answers it (bucket_shape; db/shape_rule.hpp: rows and columns apart).")
      .def(
          "history",
          [](py_store &s, std::int64_t device_id, const std::string &dtype, const std::string &op,
             std::optional<std::uint64_t> n, std::optional<shape_tuple> shape) {
            if (!shape)
              return list_of(s.get().history(device_id, dtype, op, n), measurement_dict);
            const auto [outer, r, inner] = *shape;
            return list_of(s.get().history(device_id, dtype, op,
                                           std::optional<rt::reduction_shape>({outer, r, inner})),
                           measurement_dict);
          },
          nb::arg("device_id"), nb::arg("dtype"), nb::arg("op"), nb::arg("n") = nb::none(),
          nb::arg("shape") = nb::none(), "Every measurement, of one size n or one shape "
          "(outer, r, inner) when given (shape wins).")
      .def("merge_from", [](py_store &s, const std::string &other) {
        const auto st = s.get().merge_from(other);
        nb::dict d;
        d["inserted"] = st.inserted;
        d["replaced"] = st.replaced;
        d["kept"] = st.kept;
        d["builds_inserted"] = st.builds_inserted;
        d["baselines_inserted"] = st.baselines_inserted;
        d["baselines_replaced"] = st.baselines_replaced;
        d["application_times_copied"] = st.application_times_copied;
        d["application_times_kept_out"] = st.application_times_kept_out;
        return d;
      });
}

// best for a shape, as the runtime answers it (db/axis_picks.hpp axis_best).
void bind_axis_best(nb::module_ &m) {
  m.def(
      "catalog_best_shape",
      [](const std::string &path, const std::string &device, const std::string &dtype,
         const std::string &op, std::uint64_t outer, std::uint64_t r, std::uint64_t inner,
         bool allow_flagged, bool nondeterministic) -> nb::object {
        const auto c = db::catalog::open(path, {allow_flagged, !nondeterministic});
        const auto [dev, table] = c.axis_table_for({device, device, 0}, dtype, op);
        const auto b = table ? db::axis_best(*table, {outer, r, inner}) : std::nullopt;
        if (!b)
          return nb::none();
        nb::dict d = best_dict(b->best);
        d["application_s"] = b->application_s; // its calibrated lone call, or None
        return d;
      },
      nb::arg("path"), nb::arg("device"), nb::arg("dtype"), nb::arg("op"), nb::arg("outer"),
      nb::arg("r"), nb::arg("inner"), nb::arg("allow_flagged") = false,
      nb::arg("nondeterministic") = false,
      "best for a shape as the runtime answers it: the calibrated pick of the tuned shape that "
      "answers it (db/axis_picks.hpp axis_best), as Store.best_for's dict, or None.");
}

// Module functions over a file: the Catalog's best, the exports, atomic writes, checks.
void bind_exports(nb::module_ &m) {
  m.def(
      "check_file",
      [](const std::string &path) {
        const auto inspection = db::inspect_file(path);
        nb::dict d;
        d["schema_version"] = inspection.version;
        d["current_version"] = db::current_schema_version();
        d["integrity"] = db::integrity_of(path);
        return d;
      },
      nb::arg("path"), "The file's schema version and integrity, read without writing it.");
  m.def(
      "export_header",
      [](const std::string &path, const std::string &ns, bool allow_flagged,
         bool nondeterministic) {
        return db::export_header(db::catalog::open(path, {allow_flagged, !nondeterministic}),
                                 library(), ns,
                                 compile_lowered);
      },
      nb::arg("path"), nb::arg("namespace") = "reducetune_dispatch",
      nb::arg("allow_flagged") = false, nb::arg("nondeterministic") = false);
  m.def(
      "export_json",
      [](const std::string &path, bool allow_flagged, bool nondeterministic) {
        const reducetune::point_selection selection{allow_flagged, !nondeterministic};
        const auto file = db::open_for_reading(path);
        const db::application_source apps{&file, selection};
        return db::export_json(db::catalog::load(file, selection), library(), compile_lowered,
                               &apps)
            .dump(2);
      },
      nb::arg("path"), nb::arg("allow_flagged") = false, nb::arg("nondeterministic") = false);
  m.def(
      "catalog_best",
      [](const std::string &path, const std::string &device, const std::string &dtype,
         const std::string &op, std::uint64_t n, bool allow_flagged,
         bool nondeterministic) -> nb::object {
        const reducetune::point_selection selection{allow_flagged, !nondeterministic};
        const auto file = db::open_for_reading(path);
        const auto c = db::catalog::load(file, selection);
        const auto *e = c.find(device, dtype, op, n);
        if (e == nullptr)
          return nb::none();
        const auto *dev = c.device_of(device);
        auto rule = db::export_rule_json(*e, dev->device, library(), compile_lowered);
        // the same application pick as export json gives this rule (application_ranking.hpp)
        const auto picks = db::rank_for_applications(
            c, file, reducetune::dtype_from_string(dtype), reducetune::op_from_string(op),
            selection, library(), db::default_extra_launch_s);
        if (const auto p = picks.find({dev->device.uuid, e->bucket_n}); p != picks.end())
          rule["application"] = db::application_pick_json(p->second);
        rule["requested_n"] = n;
        rule["measurement_id"] = e->measurement_id;
        rule["device"] = dev->device.name;
        return nb::module_::import_("json").attr("loads")(rule.dump());
      },
      nb::arg("path"), nb::arg("device"), nb::arg("dtype"), nb::arg("op"), nb::arg("n"),
      nb::arg("allow_flagged") = false, nb::arg("nondeterministic") = false,
      "The export's rule (export json) for the measured size nearest to n, or None.");
  bind_axis_best(m);
  m.def(
      "device_model_key",
      [](const nb::dict &device) { return db::device_model_key(device_of(device)); },
      nb::arg("device"), "The text naming a device's model (records.hpp, model_fields).");
  m.def(
      "write_file_atomically",
      [](const std::string &path, const std::string &content) {
        db::write_file_atomically(path, content);
      },
      nb::arg("path"), nb::arg("content"));
}

} // namespace

void bind_store(nb::module_ &m) {
  nb::class_<py_store> c(m, "Store");
  bind_store_file(c);
  bind_store_rows(c);
  bind_store_queries(c);
  bind_exports(m);
}

} // namespace rtpy
