"""Reads what `tokamak runs export --to mlflow` logged, with MLflow's own client against the server given, and prints
as JSON each run of the experiment: its tags, params, status, every metric's full history (key -> [[step,
timestamp, value], ...]) and the artifacts' text. Exit 3 when mlflow is not installed.
Usage: mlflow_reader.py URL EXPERIMENT"""
import json
import os
import sys
import tempfile

try:
    from mlflow.tracking import MlflowClient
except ImportError:
    sys.exit(3)

client = MlflowClient(tracking_uri=sys.argv[1])
experiment = client.get_experiment_by_name(sys.argv[2])
runs = []
for run in client.search_runs([experiment.experiment_id], max_results=1000):
    history = {}
    for key in run.data.metrics:
        history[key] = [[m.step, m.timestamp, m.value] for m in client.get_metric_history(run.info.run_id, key)]
    artifacts = {}
    with tempfile.TemporaryDirectory() as tmp:
        for f in client.list_artifacts(run.info.run_id):
            path = client.download_artifacts(run.info.run_id, f.path, tmp)
            with open(path, encoding="utf-8") as fh:
                artifacts[f.path] = fh.read()
    runs.append({"run_id": run.info.run_id, "name": run.info.run_name, "status": run.info.status,
                 "start_time": run.info.start_time, "end_time": run.info.end_time,
                 "tags": dict(run.data.tags), "params": dict(run.data.params), "metrics": history,
                 "artifacts": artifacts})
json.dump(runs, sys.stdout)
