#!/usr/bin/env python3
"""Writes the inference-perf result directories the tests read (test_vopen.c,
test_validate_cli.c): small runs shaped like shared/validation/openloop/ (the
same files and keys; config.yaml in PyYAML's block style as inference-perf
writes it, profile.yaml as JSON), with made-up numbers.
  ok/llama-small        a good run: 2 constant stages on Llama-2-7B TP1
  ok/mixtral-small      a good run of a mixture-of-experts model: skipped
  ok/poisson-small      a good run with load.type poisson: skipped
  bad/<kind>            one defect each (the tests name the file, line, field)
Run from this directory: python3 make_fixtures.py"""
import copy, json, os, shutil

CONFIG = """api:
  type: completion
  streaming: true
  headers: null
data:
  type: shared_prefix
  path: null
  input_distribution: null
  output_distribution: null
  shared_prefix:
    num_groups: 2
    num_prompts_per_group: 3
    system_prompt_len: 20
    question_len: 60
    output_len: 16
load:
  type: {load_type}
  interval: 1.0
  stages:
  - rate: 2.0
    duration: 10
  - rate: 4.0
    duration: 5
  sweep: null
  num_workers: 8
  worker_max_concurrency: 100
  worker_max_tcp_connections: 2500
  circuit_breakers: []
  request_timeout: null
metrics: null
report:
  request_lifecycle:
    summary: true
    per_stage: true
    per_request: true
  prometheus:
    summary: true
    per_stage: false
storage:
  local_storage:
    path: /workspace/data/results
    report_file_prefix: null
  google_cloud_storage: null
  simple_storage_service: null
server:
  type: vllm
  model_name: {model}
  base_url: http://10.0.0.1:8000
  ignore_eos: true
  api_key: null
tokenizer:
  pretrained_model_name_or_path: {model}
  trust_remote_code: null
  token: null
circuit_breakers: null
"""

EXP = """model: {model}
tensor_parallelism: {tp}
max_model_len: 4096
max_num_batched_tokens: 2048
max_num_seqs: 128
app: inference-perf
"""


def dist(mean, p99):
    return {"mean": mean, "min": mean * 0.7, "median": mean, "p90": mean * 1.2, "p99": p99, "max": p99 * 1.1}


def stage(count, rate, ttft, ttft_p99, e2e, prompt_mean):
    rps = count / (count / rate + e2e)
    return {
        "load_summary": {"count": count, "schedule_delay": dist(0.0004, 0.0017), "send_duration": count / rate - 0.2,
                         "requested_rate": rate, "achieved_rate": rate},
        "successes": {
            "count": count,
            "latency": {"request_latency": dist(e2e, e2e * 1.2), "time_to_first_token": dist(ttft, ttft_p99),
                        "time_per_output_token": dist(0.004, 0.005), "inter_token_latency": dist(0.004, 0.01)},
            "throughput": {"input_tokens_per_sec": prompt_mean * rps, "output_tokens_per_sec": 16 * rps,
                           "total_tokens_per_sec": (prompt_mean + 16) * rps, "requests_per_sec": rps},
            "prompt_len": dist(prompt_mean, prompt_mean + 5),
        },
        "failures": {"count": 0, "request_latency": None, "prompt_len": None},
    }


PROFILE = {"api": {"streaming": True, "type": "completion"},
           "data": {"shared_prefix": {"enable_multi_turn_chat": True, "num_unique_system_prompts": 3,
                                      "num_users_per_system_prompt": 2, "output_len": 16, "question_len": 60,
                                      "system_prompt_len": 20}, "type": "shared_prefix"},
           "load": {"stages": [{"duration": 10, "rate": 2}, {"duration": 5, "rate": 4}], "type": "constant"}}


def write_run(path, model="meta-llama/Llama-2-7b-hf", tp=1, load_type="constant"):
    os.makedirs(path)
    with open(os.path.join(path, "config.yaml"), "w") as f:
        f.write(CONFIG.format(model=model, load_type=load_type))
    with open(os.path.join(path, "exp-config.yaml"), "w") as f:
        f.write(EXP.format(model=model, tp=tp))
    with open(os.path.join(path, "profile.yaml"), "w") as f:
        json.dump(PROFILE, f, separators=(",", ":"))
    stages = [stage(20, 2.0, 0.025, 0.046, 0.21, 84.5), stage(20, 4.0, 0.029, 0.041, 0.23, 84.5)]
    for k, s in enumerate(stages):
        with open(os.path.join(path, f"stage_{k}_lifecycle_metrics.json"), "w") as f:
            json.dump(s, f, indent=2)
    return stages


def edit(path, name, fn):
    p = os.path.join(path, name)
    with open(p) as f:
        text = f.read()
    with open(p, "w") as f:
        f.write(fn(text))


def main():
    for d in ("ok", "bad"):
        shutil.rmtree(d, ignore_errors=True)
    write_run("ok/llama-small")
    write_run("ok/mixtral-small", model="mistralai/Mixtral-8x7B-v0.1", tp=2)
    write_run("ok/poisson-small", load_type="poisson")
    # bad: one defect each
    write_run("bad/truncated-json")
    edit("bad/truncated-json", "stage_1_lifecycle_metrics.json", lambda t: t[: len(t) // 2])
    write_run("bad/no-successes")
    s = stage(20, 2.0, 0.025, 0.046, 0.21, 84.5)
    del s["successes"]
    with open("bad/no-successes/stage_0_lifecycle_metrics.json", "w") as f:
        json.dump(s, f, indent=2)
    write_run("bad/no-stages")
    edit("bad/no-stages", "config.yaml",
         lambda t: t.replace("  stages:\n  - rate: 2.0\n    duration: 10\n  - rate: 4.0\n    duration: 5\n", ""))
    write_run("bad/yaml-indent")
    edit("bad/yaml-indent", "config.yaml", lambda t: t.replace("    duration: 5\n", "     duration: 5\n"))
    write_run("bad/missing-stage-file")
    os.remove("bad/missing-stage-file/stage_1_lifecycle_metrics.json")
    write_run("bad/exp-unknown-key")
    edit("bad/exp-unknown-key", "exp-config.yaml", lambda t: t + "gpu_memory_utilization: 0.95\n")
    write_run("bad/rate-mismatch")
    edit("bad/rate-mismatch", "stage_0_lifecycle_metrics.json",
         lambda t: t.replace('"requested_rate": 2.0', '"requested_rate": 3.0'))
    write_run("bad/no-config")
    os.remove("bad/no-config/config.yaml")


if __name__ == "__main__":
    main()
