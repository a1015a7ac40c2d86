// A sweep over several devices at once, on the CPU: the toy family, a fake compiler, one real
// database and one fake worker (a shell script) per device, each reporting its own copy roof and
// taking its own time per candidate. Also the queue that hands the keys out, the --devices list
// and the refusal of devices of different models.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "db/database.hpp"
#include "sweep/device_list.hpp"
#include "sweep/key_queue.hpp"
#include "sweep_toy.hpp"

namespace ktune::sweep {
namespace {
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Arguments: the copy roof it reports, the seconds each candidate takes, the seconds its start
// takes. Every candidate is ok.
const char* kDeviceWorker = R"(#!/bin/sh
gbps="$1"; pause="$2"; start="$3"
while IFS= read -r line; do
  case "$line" in
    *'"op":"hello"'*) sleep "$start"; echo "{\"ready\":true,\"device\":{\"name\":\"Toy GPU\",\"arch\":\"sm_90a\"},\"copy_gbps\":$gbps,\"matrix_tflops\":0.4,\"matrix_probe\":\"toy mma m8n8k4\"}" ;;
    *'"op":"exit"'*) exit 0 ;;
    *'"op":"run"'*)
      sleep "$pause"
      echo '{"status":"ok","detail":"","max_abs_err":0.001,"rel_l2_err":0.0001,"median_us":10,"p10_us":10,"p90_us":10,"samples":20,"rel_ci":null,"stop":"converged","fully_timed":true,"bytes":5000000,"flops":1000000,"fatal":false,"rss_bytes":1048576,"device_used_bytes":0,"time":{"setup_ms":1,"load_ms":1,"verify_ms":1,"screen_ms":1,"full_ms":1,"timed_ms":1,"total_ms":5}}' ;;
    *) exit 9 ;;
  esac
done
)";

struct NodeSweep : ::testing::Test, testing::ToySweep {
  std::string path = tmp.path() + "/node.db";
  std::vector<std::unique_ptr<db::Database>> connections;

  NodeSweep() : ToySweep(kDeviceWorker) {}

  struct Spec {
    int gbps;          // the copy roof it reports; 0: a worker that does not start
    double pause;      // seconds per candidate
    double start = 0;  // seconds its start takes
  };
  std::vector<Device> devices(const std::vector<Spec>& specs) {
    std::vector<Device> out;
    for (size_t i = 0; i < specs.size(); ++i) {
      Device d;
      connections.push_back(db::Database::open(path, true));
      d.db = connections.back().get();
      d.provenance = provenance();
      d.provenance.host = host;
      d.worker_command = specs[i].gbps == 0 ? std::vector<std::string>{"/bin/false"} : options.worker_command;
      if (specs[i].gbps != 0)
        d.worker_command.insert(
            d.worker_command.end(),
            {std::to_string(specs[i].gbps), fmt::format("{}", specs[i].pause), fmt::format("{}", specs[i].start)});
      d.compiler = &compiler;
      d.compile.arch = "sm_90a";
      d.label = fmt::format("device {}", i);
      out.push_back(std::move(d));
    }
    return out;
  }
  // Run id -> the keys (heads) it measured, each config once.
  std::map<int64_t, std::multiset<int64_t>> keys_by_run() {
    std::map<int64_t, std::multiset<int64_t>> out;
    for (const auto& m : db::Database::open(path, false, true)->measurements()) out[m.run_id].insert(m.key.at("heads"));
    return out;
  }
};

TEST_F(NodeSweep, KeysGoToTheDeviceThatFreesUpAndEachDeviceIsItsOwnRunWithItsOwnRoof) {
  // The slow device's first candidate takes longer than the fast one's whole share: a split fixed
  // in advance would give it half the keys.
  const auto s = space({8, 16, 24, 32, 40, 48, 56, 64}, {16}, {1});
  const auto node = run_node_sweep(s, devices({{1000, 0}, {2000, 2.5}}), options);
  ASSERT_EQ(node.devices.size(), 2u);
  for (const auto& e : node.errors) EXPECT_FALSE(e);
  const auto runs = db::Database::open(path, false, true)->runs();
  ASSERT_EQ(runs.size(), 2u);
  std::map<double, int64_t> run_of_roof;
  for (const auto& r : runs) run_of_roof[r.copy_gbps] = r.id;
  ASSERT_EQ(run_of_roof.size(), 2u) << "each device's run measured its own roof";
  EXPECT_EQ(node.devices[0].run_id, run_of_roof.at(1000));
  EXPECT_EQ(node.devices[1].run_id, run_of_roof.at(2000));

  auto by_run = keys_by_run();
  std::multiset<int64_t> all;
  for (const auto& [run, keys] : by_run) all.insert(keys.begin(), keys.end());
  EXPECT_EQ(all, (std::multiset<int64_t>{8, 16, 24, 32, 40, 48, 56, 64})) << "every key once, in one run";
  EXPECT_EQ(by_run[run_of_roof.at(2000)].size(), 1u) << "the slow device took one key";
  EXPECT_EQ(node.devices[0].ok + node.devices[1].ok, 8u);
}

TEST_F(NodeSweep, AResumedSweepContinuesEveryDevicesRunAndFinishesEachKeyInItsRun) {
  // Two configs a key; the budget stops both devices half-way through.
  const auto s = space({8, 16, 24, 32, 40, 48}, {16, 32}, {1});
  auto first = options;
  first.budget_s = 1.0;
  const auto stopped = run_node_sweep(s, devices({{1000, 0.4}, {1000, 0.4}}), first);
  EXPECT_GT(stopped.devices[0].not_started + stopped.devices[1].not_started, 0u);
  ASSERT_EQ(db::Database::open(path, false, true)->runs().size(), 2u);

  // Device 1 starts late: device 0 would take every key, those device 1's run began included,
  // were they not its alone.
  auto again = options;
  again.resume = true;
  const auto resumed = run_node_sweep(s, devices({{1000, 0}, {1000, 0, 1.5}}), again);
  for (const auto& d : resumed.devices) EXPECT_TRUE(d.resumed);
  EXPECT_EQ(db::Database::open(path, false, true)->runs().size(), 2u) << "no new run: both were continued";
  const auto after = keys_by_run();
  std::multiset<int64_t> all;
  for (const auto& [run, keys] : after) {
    all.insert(keys.begin(), keys.end());
    for (int64_t k : std::set<int64_t>(keys.begin(), keys.end()))
      EXPECT_EQ(keys.count(k), 2u) << "key heads=" << k << " has both configs in run " << run;
  }
  EXPECT_EQ(all.size(), 12u) << "six keys, two configs, each once";
}

TEST_F(NodeSweep, ADeviceWhoseWorkerDoesNotStartStopsAloneAndTheOthersDoTheKeys) {
  const auto s = space({8, 16, 24, 32}, {16}, {1});
  const auto node = run_node_sweep(s, devices({{0, 0}, {1000, 0}}), options);
  ASSERT_TRUE(node.errors[0]);
  EXPECT_FALSE(node.errors[1]);
  try {
    std::rethrow_exception(node.errors[0]);
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("did not start"));
  }
  const auto by_run = keys_by_run();
  ASSERT_EQ(by_run.size(), 1u);
  EXPECT_EQ(by_run.begin()->second, (std::multiset<int64_t>{8, 16, 24, 32}));
  EXPECT_EQ(db::Database::open(path, false, true)->runs().size(), 1u) << "no run for the device that never started";
}

TEST(KeyQueue, HandsOutInOrderAndAnOwnedKeyOnlyToItsOwnerFirst) {
  KeyQueue q(5, {-1, 1, -1, 0, -1});
  EXPECT_EQ(q.peek(0), 3u);
  EXPECT_EQ(q.take(0), 3u) << "its own key first";
  EXPECT_EQ(q.take(0), 0u);
  EXPECT_EQ(q.take(2), 2u) << "device 2 owns nothing and never gets key 1";
  EXPECT_EQ(q.left(), (std::vector<size_t>{1, 4}));
  EXPECT_EQ(q.take(2), 4u);
  EXPECT_EQ(q.take(2), std::nullopt);
  EXPECT_EQ(q.take(1), 1u);
  EXPECT_EQ(q.take(1), std::nullopt);
  EXPECT_TRUE(q.left().empty());
}

TEST(DeviceList, AllOrOrdinalsEachOnceAndOfADevice) {
  EXPECT_THAT(parse_device_list("all", 3), ElementsAre(0, 1, 2));
  EXPECT_THAT(parse_device_list("2,0", 3), ElementsAre(2, 0));
  EXPECT_THAT(parse_device_list("1", 2), ElementsAre(1));
  for (const auto& [text, says] :
       std::vector<std::pair<std::string, std::string>>{{"0,,2", "expected 'all' or device ordinals"},
                                                        {"", "expected 'all' or device ordinals"},
                                                        {"0,x", "expected 'all' or device ordinals"},
                                                        {"3", "there is no device 3 (devices 0..2)"},
                                                        {"-1", "there is no device -1"},
                                                        {"1,1", "device 1 is named twice"}}) {
    try {
      parse_device_list(text, 3);
      ADD_FAILURE() << "'" << text << "' was accepted";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(says)) << text;
    }
  }
  EXPECT_THROW(parse_device_list("all", 0), Error);
}

TEST(DeviceList, DevicesOfDifferentModelsAreRefusedUnlessAsked) {
  const std::vector<DeviceModel> same = {{0, "NVIDIA H100", "sm_90a"}, {2, "NVIDIA H100", "sm_90a"}};
  EXPECT_NO_THROW(refuse_mixed_models(same, false));
  for (const auto& other : {DeviceModel{3, "NVIDIA H200", "sm_90a"}, DeviceModel{3, "NVIDIA H100", "sm_80"}}) {
    auto mixed = same;
    mixed.push_back(other);
    try {
      refuse_mixed_models(mixed, false);
      ADD_FAILURE() << other.name << " " << other.arch << " was accepted";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("devices 0 (NVIDIA H100, sm_90a) and 3"));
      EXPECT_THAT(e.what(), HasSubstr("--mixed-devices"));
    }
    EXPECT_NO_THROW(refuse_mixed_models(mixed, true));
  }
}

}  // namespace
}  // namespace ktune::sweep
