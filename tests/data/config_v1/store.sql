PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  uid TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL CHECK (status IN ('running','finished','stopped','failed','crashed')),
  created REAL NOT NULL,
  updated REAL NOT NULL,
  ended REAL,
  heartbeat REAL,
  config_json TEXT NOT NULL DEFAULT '',
  dataset TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '',
  n_params INTEGER NOT NULL DEFAULT 0,
  device TEXT NOT NULL DEFAULT '',
  gpu_name TEXT NOT NULL DEFAULT '',
  world_size INTEGER NOT NULL DEFAULT 1,
  torch_version TEXT NOT NULL DEFAULT '',
  cuda_version TEXT NOT NULL DEFAULT '',
  host TEXT NOT NULL DEFAULT '',
  pid INTEGER NOT NULL DEFAULT 0,
  total_steps INTEGER NOT NULL DEFAULT 0,
  tokens_per_step INTEGER NOT NULL DEFAULT 0,
  error TEXT NOT NULL DEFAULT ''
, tags TEXT NOT NULL DEFAULT '[]', notes TEXT NOT NULL DEFAULT '', remote TEXT NOT NULL DEFAULT '', journal_offset INTEGER NOT NULL DEFAULT 0, journal_wall REAL NOT NULL DEFAULT 0);
INSERT INTO runs VALUES(1,'2193fdf9c681a071','old-keys','finished',1795796155.6277930736,1795796155.8235619068,1795796155.8235619068,1795796155.8235619068,'{"data":{"jsonl_field":"text","path":"default","val_fraction":0.05,"val_path":""},"device":"cpu","dist":{"bucket_mb":25.0,"gpus":1,"timeout_s":600,"zero":0},"memory_check":true,"model":{"context":32,"dropout":0.0,"init_from":"","logit_softcap":0.0,"mlp_act":"gelu","n_embd":32,"n_head":2,"n_layer":1,"norm":"layernorm","position":"learned","preset":"nano","qk_norm":false,"qkv_bias":true,"tie_weights":true,"unet_skips":false,"value_embeddings":0,"vocab_pad_multiple":64,"vocab_size":50257,"zero_init_proj":false},"name":"old-keys","opt":{"activation_checkpointing":false,"attention":"sdpa","cuda_graphs":false,"embed_lr":0.01,"fused_adamw":false,"fused_glue":false,"head_lr":0.0,"layers":"native","muon_ns":"newton_schulz","optimizer":"adamw","pin_memory":"auto","precision":"fp32","prefetch":false,"schedule":"wsd","sdpa_backend":"auto"},"threads":1,"train":{"batch_size":2,"batch_tokens":0,"batch_warmup":0,"beta1":0.9,"beta2":0.99,"checkpoint_dir":"","checkpoint_every":0,"checkpoint_keep":1,"checkpoint_minutes":0.0,"context":0,"decay_fraction":0.5,"eps":1e-08,"eval_batches":1,"eval_every":2,"eval_tasks":"","grad_accum":1,"grad_clip":0.5,"log_every":10,"lr":0.003,"max_skipped_steps":5,"min_lr_ratio":0.1,"muon_lr":0.02,"muon_momentum":0.95,"normuon_beta2":0.95,"profile":true,"resume":"","sample_every":-1,"sample_prompt":"Hi","sample_temperature":0.8,"sample_tokens":8,"sample_top_k":40,"seed":1337,"seq_warmup":0,"steps":3,"stop_at_target":false,"target_val_loss":20.0,"val_tokens":0,"warmup_steps":1,"weight_decay":0.05}}','jargon.txt: 1.68 MB text → 476,849 tokens','nano',1623520,'cpu','',1,'2.11.0','13.0','vm',2278,3,64,'','[]','','',0,0.0);
CREATE TABLE samples (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  prompt TEXT NOT NULL DEFAULT '',
  text TEXT NOT NULL,
  created REAL NOT NULL
);
CREATE TABLE checkpoints (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  path TEXT NOT NULL,
  created REAL NOT NULL
);
INSERT INTO checkpoints VALUES(1,1,3,'/tmp/fx/data/tokamak/checkpoints/old-keys-2193fdf9/step_3.safetensors',1795796155.8235619068);
CREATE TABLE run_summary (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  metric TEXT NOT NULL,
  n INTEGER NOT NULL,
  last_step INTEGER NOT NULL,
  last REAL, min REAL, max REAL,
  PRIMARY KEY (run_id, metric)
) WITHOUT ROWID;
INSERT INTO run_summary VALUES(1,'grad_norm',2,3,1.6802442073822021484,1.3341087102890014648,1.6802442073822021484);
INSERT INTO run_summary VALUES(1,'lr',2,3,0.0002999999999999999195,0.0002999999999999999195,0.0030000000000000000624);
INSERT INTO run_summary VALUES(1,'mem_allocated',2,3,512786432.0,499351552.0,512786432.0);
INSERT INTO run_summary VALUES(1,'mem_peak',2,3,512786432.0,499662848.0,512786432.0);
INSERT INTO run_summary VALUES(1,'mem_reserved',2,3,77585392.0,63239392.0,77585392.0);
INSERT INTO run_summary VALUES(1,'mfu',2,3,0.12912012478852280539,0.078854030408859979162,0.12912012478852280539);
INSERT INTO run_summary VALUES(1,'phase_backward_ms',2,3,11.989160000000000039,11.989160000000000039,17.279803999999998609);
INSERT INTO run_summary VALUES(1,'phase_data_ms',2,3,0.008425000000000000197,0.008425000000000000197,0.14928900000000000503);
INSERT INTO run_summary VALUES(1,'phase_forward_ms',2,3,8.680887000000000242,8.680887000000000242,19.890412000000001313);
INSERT INTO run_summary VALUES(1,'phase_optimizer_ms',2,3,7.2302464999999997985,7.2302464999999997985,8.8211119999999993979);
INSERT INTO run_summary VALUES(1,'phase_other_ms',2,3,0.48412500000000252553,0.3514580000000003257,0.48412500000000252553);
INSERT INTO run_summary VALUES(1,'skipped_steps',2,3,0.0,0.0,0.0);
INSERT INTO run_summary VALUES(1,'step_ms',2,3,28.392843500000001454,28.392843500000001454,46.492074999999999816);
INSERT INTO run_summary VALUES(1,'steps_to_target',1,2,2.0,2.0,2.0);
INSERT INTO run_summary VALUES(1,'time_to_target_s',1,2,0.075232867000000008816,0.075232867000000008816,0.075232867000000008816);
INSERT INTO run_summary VALUES(1,'tok_s',2,3,2254.0891334113821358,1376.578696476765117,2254.0891334113821358);
INSERT INTO run_summary VALUES(1,'tokens',3,3,192.0,64.0,192.0);
INSERT INTO run_summary VALUES(1,'tokens_to_target',1,2,128.0,128.0,128.0);
INSERT INTO run_summary VALUES(1,'train_loss',2,3,10.751173973083496093,10.751173973083496093,10.829675674438476562);
INSERT INTO run_summary VALUES(1,'val_loss',2,3,10.711794853210449218,10.711794853210449218,10.721956253051757812);
INSERT INTO run_summary VALUES(1,'wall_s',3,3,0.93350017500000004311,0.85413724599999996112,0.93350017500000004311);
CREATE TABLE metric_keys (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  integer INTEGER NOT NULL DEFAULT 0
);
INSERT INTO metric_keys VALUES(1,'tokens',1);
INSERT INTO metric_keys VALUES(2,'wall_s',0);
INSERT INTO metric_keys VALUES(3,'train_loss',0);
INSERT INTO metric_keys VALUES(4,'val_loss',0);
INSERT INTO metric_keys VALUES(5,'lr',0);
INSERT INTO metric_keys VALUES(6,'grad_norm',0);
INSERT INTO metric_keys VALUES(7,'tok_s',0);
INSERT INTO metric_keys VALUES(8,'mfu',0);
INSERT INTO metric_keys VALUES(9,'step_ms',0);
INSERT INTO metric_keys VALUES(10,'mem_allocated',1);
INSERT INTO metric_keys VALUES(11,'mem_reserved',1);
INSERT INTO metric_keys VALUES(12,'mem_peak',1);
INSERT INTO metric_keys VALUES(13,'skipped_steps',1);
INSERT INTO metric_keys VALUES(14,'phase_data_ms',0);
INSERT INTO metric_keys VALUES(15,'phase_forward_ms',0);
INSERT INTO metric_keys VALUES(16,'phase_backward_ms',0);
INSERT INTO metric_keys VALUES(17,'phase_optimizer_ms',0);
INSERT INTO metric_keys VALUES(18,'phase_other_ms',0);
INSERT INTO metric_keys VALUES(19,'time_to_target_s',0);
INSERT INTO metric_keys VALUES(20,'tokens_to_target',1);
INSERT INTO metric_keys VALUES(21,'steps_to_target',1);
CREATE TABLE metric_values (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step INTEGER NOT NULL,
  key_id INTEGER NOT NULL REFERENCES metric_keys(id),
  value REAL NOT NULL,
  PRIMARY KEY (run_id, step, key_id)
) WITHOUT ROWID;
INSERT INTO metric_values VALUES(1,1,1,64.0);
INSERT INTO metric_values VALUES(1,1,2,0.85413724599999996112);
INSERT INTO metric_values VALUES(1,1,3,10.829675674438476562);
INSERT INTO metric_values VALUES(1,1,5,0.0030000000000000000624);
INSERT INTO metric_values VALUES(1,1,6,1.3341087102890014648);
INSERT INTO metric_values VALUES(1,1,7,1376.578696476765117);
INSERT INTO metric_values VALUES(1,1,8,0.078854030408859979162);
INSERT INTO metric_values VALUES(1,1,9,46.492074999999999816);
INSERT INTO metric_values VALUES(1,1,10,499351552.0);
INSERT INTO metric_values VALUES(1,1,11,63239392.0);
INSERT INTO metric_values VALUES(1,1,12,499662848.0);
INSERT INTO metric_values VALUES(1,1,13,0.0);
INSERT INTO metric_values VALUES(1,1,14,0.14928900000000000503);
INSERT INTO metric_values VALUES(1,1,15,19.890412000000001313);
INSERT INTO metric_values VALUES(1,1,16,17.279803999999998609);
INSERT INTO metric_values VALUES(1,1,17,8.8211119999999993979);
INSERT INTO metric_values VALUES(1,1,18,0.3514580000000003257);
INSERT INTO metric_values VALUES(1,2,1,128.0);
INSERT INTO metric_values VALUES(1,2,2,0.89581312400000001616);
INSERT INTO metric_values VALUES(1,2,4,10.721956253051757812);
INSERT INTO metric_values VALUES(1,2,19,0.075232867000000008816);
INSERT INTO metric_values VALUES(1,2,20,128.0);
INSERT INTO metric_values VALUES(1,2,21,2.0);
INSERT INTO metric_values VALUES(1,3,1,192.0);
INSERT INTO metric_values VALUES(1,3,2,0.93350017500000004311);
INSERT INTO metric_values VALUES(1,3,3,10.751173973083496093);
INSERT INTO metric_values VALUES(1,3,4,10.711794853210449218);
INSERT INTO metric_values VALUES(1,3,5,0.0002999999999999999195);
INSERT INTO metric_values VALUES(1,3,6,1.6802442073822021484);
INSERT INTO metric_values VALUES(1,3,7,2254.0891334113821358);
INSERT INTO metric_values VALUES(1,3,8,0.12912012478852280539);
INSERT INTO metric_values VALUES(1,3,9,28.392843500000001454);
INSERT INTO metric_values VALUES(1,3,10,512786432.0);
INSERT INTO metric_values VALUES(1,3,11,77585392.0);
INSERT INTO metric_values VALUES(1,3,12,512786432.0);
INSERT INTO metric_values VALUES(1,3,13,0.0);
INSERT INTO metric_values VALUES(1,3,14,0.008425000000000000197);
INSERT INTO metric_values VALUES(1,3,15,8.680887000000000242);
INSERT INTO metric_values VALUES(1,3,16,11.989160000000000039);
INSERT INTO metric_values VALUES(1,3,17,7.2302464999999997985);
INSERT INTO metric_values VALUES(1,3,18,0.48412500000000252553);
CREATE TABLE sweeps (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  spec_json TEXT NOT NULL,
  metric TEXT NOT NULL,
  maximize INTEGER NOT NULL DEFAULT 0,
  min_steps INTEGER NOT NULL DEFAULT 0,
  eta INTEGER NOT NULL DEFAULT 3,
  created REAL NOT NULL
);
INSERT INTO sweeps VALUES(1,'small-lr-opt',replace('{\n  "name": "small-lr-opt",\n  "base": {\n    "model": {\n      "n_layer": 2,\n      "n_head": 2,\n      "n_embd": 64,\n      "context": 64\n    },\n    "threads": 1,\n    "train": {\n      "steps": 120,\n      "batch_size": 4,\n      "eval_every": 10,\n      "eval_batches": 2,\n      "log_every": 10,\n      "sample_every": -1,\n      "checkpoint_minutes": 0,\n      "warmup_steps": 10\n    }\n  },\n  "sweep": {\n    "train.lr": {\n      "min": 0.0003,\n      "max": 0.03,\n      "count": 4,\n      "scale": "log"\n    },\n    "opt.optimizer": [\n      "adamw",\n      "muon"\n    ]\n  },\n  "metric": "best_val_loss",\n  "early_stopping": {\n    "method": "asha",\n    "min_steps": 10,\n    "eta": 3\n  }\n}','\n',char(10)),'best_val_loss',0,10,3,1795796172.2248170376);
CREATE TABLE queue (
  id INTEGER PRIMARY KEY,
  position INTEGER NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued','running','done','failed','removed','stopped')),
  target TEXT NOT NULL DEFAULT 'local',
  name TEXT NOT NULL,
  config_json TEXT NOT NULL,
  run_uid TEXT NOT NULL DEFAULT '',
  folder TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  created REAL NOT NULL,
  started REAL,
  ended REAL,
  sweep_id INTEGER REFERENCES sweeps(id),
  point INTEGER NOT NULL DEFAULT 0,
  rung INTEGER NOT NULL DEFAULT 0,
  halt_step INTEGER NOT NULL DEFAULT 0,
  resume TEXT NOT NULL DEFAULT ''
);
INSERT INTO queue VALUES(1,1,'queued','local','small-lr-opt-p0-lr=0.0003-optimizer=adamw','{"data":{"jsonl_field":"text","path":"default","val_fraction":0.05,"val_path":""},"device":"cpu","dist":{"bucket_mb":25.0,"gpus":1,"timeout_s":600,"zero":0},"memory_check":true,"model":{"context":64,"dropout":0.0,"init_from":"","logit_softcap":0.0,"mlp_act":"gelu","n_embd":64,"n_head":2,"n_layer":2,"norm":"layernorm","position":"learned","preset":"nano","qk_norm":false,"qkv_bias":true,"tie_weights":true,"unet_skips":false,"value_embeddings":0,"vocab_pad_multiple":64,"vocab_size":50257,"zero_init_proj":false},"name":"small-lr-opt-p0-lr=0.0003-optimizer=adamw","opt":{"activation_checkpointing":false,"attention":"sdpa","cuda_graphs":false,"embed_lr":0.0,"fused_adamw":true,"fused_glue":false,"head_lr":0.0,"layers":"auto","muon_ns":"newton_schulz","optimizer":"adamw","pin_memory":"auto","precision":"auto","prefetch":true,"schedule":"cosine","sdpa_backend":"auto"},"threads":1,"train":{"batch_size":4,"batch_tokens":0,"batch_warmup":0,"beta1":0.9,"beta2":0.95,"checkpoint_dir":"","checkpoint_every":0,"checkpoint_keep":3,"checkpoint_minutes":0.0,"context":0,"decay_fraction":0.2,"eps":1e-08,"eval_batches":2,"eval_every":10,"eval_tasks":"","grad_accum":1,"grad_clip":1.0,"log_every":10,"lr":0.0003000000000000001,"max_skipped_steps":5,"min_lr_ratio":0.1,"muon_lr":0.02,"muon_momentum":0.95,"normuon_beta2":0.95,"profile":true,"resume":"","sample_every":-1,"sample_prompt":"The","sample_temperature":0.8,"sample_tokens":48,"sample_top_k":40,"seed":1337,"seq_warmup":0,"steps":120,"stop_at_target":false,"target_val_loss":0.0,"val_tokens":0,"warmup_steps":10,"weight_decay":0.1}}','','','',1795796172.2250890731,NULL,NULL,1,0,0,10,'');
INSERT INTO queue VALUES(2,2,'queued','local','small-lr-opt-p1-lr=0.0003-optimizer=muon','{"data":{"jsonl_field":"text","path":"default","val_fraction":0.05,"val_path":""},"device":"cpu","dist":{"bucket_mb":25.0,"gpus":1,"timeout_s":600,"zero":0},"memory_check":true,"model":{"context":64,"dropout":0.0,"init_from":"","logit_softcap":0.0,"mlp_act":"gelu","n_embd":64,"n_head":2,"n_layer":2,"norm":"layernorm","position":"learned","preset":"nano","qk_norm":false,"qkv_bias":true,"tie_weights":true,"unet_skips":false,"value_embeddings":0,"vocab_pad_multiple":64,"vocab_size":50257,"zero_init_proj":false},"name":"small-lr-opt-p1-lr=0.0003-optimizer=muon","opt":{"activation_checkpointing":false,"attention":"sdpa","cuda_graphs":false,"embed_lr":0.0,"fused_adamw":true,"fused_glue":false,"head_lr":0.0,"layers":"auto","muon_ns":"newton_schulz","optimizer":"muon","pin_memory":"auto","precision":"auto","prefetch":true,"schedule":"cosine","sdpa_backend":"auto"},"threads":1,"train":{"batch_size":4,"batch_tokens":0,"batch_warmup":0,"beta1":0.9,"beta2":0.95,"checkpoint_dir":"","checkpoint_every":0,"checkpoint_keep":3,"checkpoint_minutes":0.0,"context":0,"decay_fraction":0.2,"eps":1e-08,"eval_batches":2,"eval_every":10,"eval_tasks":"","grad_accum":1,"grad_clip":1.0,"log_every":10,"lr":0.0003000000000000001,"max_skipped_steps":5,"min_lr_ratio":0.1,"muon_lr":0.02,"muon_momentum":0.95,"normuon_beta2":0.95,"profile":true,"resume":"","sample_every":-1,"sample_prompt":"The","sample_temperature":0.8,"sample_tokens":48,"sample_top_k":40,"seed":1337,"seq_warmup":0,"steps":120,"stop_at_target":false,"target_val_loss":0.0,"val_tokens":0,"warmup_steps":10,"weight_decay":0.1}}','','','',1795796172.2255339622,NULL,NULL,1,1,0,10,'');
INSERT INTO queue VALUES(3,3,'queued','local','small-lr-opt-p2-lr=0.00139-optimizer=adamw','{"data":{"jsonl_field":"text","path":"default","val_fraction":0.05,"val_path":""},"device":"cpu","dist":{"bucket_mb":25.0,"gpus":1,"timeout_s":600,"zero":0},"memory_check":true,"model":{"context":64,"dropout":0.0,"init_from":"","logit_softcap":0.0,"mlp_act":"gelu","n_embd":64,"n_head":2,"n_layer":2,"norm":"layernorm","position":"learned","preset":"nano","qk_norm":false,"qkv_bias":true,"tie_weights":true,"unet_skips":false,"value_embeddings":0,"vocab_pad_multiple":64,"vocab_size":50257,"zero_init_proj":false},"name":"small-lr-opt-p2-lr=0.00139-optimizer=adamw","opt":{"activation_checkpointing":false,"attention":"sdpa","cuda_graphs":false,"embed_lr":0.0,"fused_adamw":true,"fused_glue":false,"head_lr":0.0,"layers":"auto","muon_ns":"newton_schulz","optimizer":"adamw","pin_memory":"auto","precision":"auto","prefetch":true,"schedule":"cosine","sdpa_backend":"auto"},"threads":1,"train":{"batch_size":4,"batch_tokens":0,"batch_warmup":0,"beta1":0.9,"beta2":0.95,"checkpoint_dir":"","checkpoint_every":0,"checkpoint_keep":3,"checkpoint_minutes":0.0,"context":0,"decay_fraction":0.2,"eps":1e-08,"eval_batches":2,"eval_every":10,"eval_tasks":"","grad_accum":1,"grad_clip":1.0,"log_every":10,"lr":0.0013924766500838343,"max_skipped_steps":5,"min_lr_ratio":0.1,"muon_lr":0.02,"muon_momentum":0.95,"normuon_beta2":0.95,"profile":true,"resume":"","sample_every":-1,"sample_prompt":"The","sample_temperature":0.8,"sample_tokens":48,"sample_top_k":40,"seed":1337,"seq_warmup":0,"steps":120,"stop_at_target":false,"target_val_loss":0.0,"val_tokens":0,"warmup_steps":10,"weight_decay":0.1}}','','','',1795796172.2256000041,NULL,NULL,1,2,0,10,'');
INSERT INTO queue VALUES(4,4,'queued','local','small-lr-opt-p3-lr=0.00139-optimizer=muon','{"data":{"jsonl_field":"text","path":"default","val_fraction":0.05,"val_path":""},"device":"cpu","dist":{"bucket_mb":25.0,"gpus":1,"timeout_s":600,"zero":0},"memory_check":true,"model":{"context":64,"dropout":0.0,"init_from":"","logit_softcap":0.0,"mlp_act":"gelu","n_embd":64,"n_head":2,"n_layer":2,"norm":"layernorm","position":"learned","preset":"nano","qk_norm":false,"qkv_bias":true,"tie_weights":true,"unet_skips":false,"value_embeddings":0,"vocab_pad_multiple":64,"vocab_size":50257,"zero_init_proj":false},"name":"small-lr-opt-p3-lr=0.00139-optimizer=muon","opt":{"activation_checkpointing":false,"attention":"sdpa","cuda_graphs":false,"embed_lr":0.0,"fused_adamw":true,"fused_glue":false,"head_lr":0.0,"layers":"auto","muon_ns":"newton_schulz","optimizer":"muon","pin_memory":"auto","precision":"auto","prefetch":true,"schedule":"cosine","sdpa_backend":"auto"},"threads":1,"train":{"batch_size":4,"batch_tokens":0,"batch_warmup":0,"beta1":0.9,"beta2":0.95,"checkpoint_dir":"","checkpoint_every":0,"checkpoint_keep":3,"checkpoint_minutes":0.0,"context":0,"decay_fraction":0.2,"eps":1e-08,"eval_batches":2,"eval_every":10,"eval_tasks":"","grad_accum":1,"grad_clip":1.0,"log_every":10,"lr":0.0013924766500838343,"max_skipped_steps":5,"min_lr_ratio":0.1,"muon_lr":0.02,"muon_momentum":0.95,"normuon_beta2":0.95,"profile":true,"resume":"","sample_every":-1,"sample_prompt":"The","sample_temperature":0.8,"sample_tokens":48,"sample_top_k":40,"seed":1337,"seq_warmup":0,"steps":120,"stop_at_target":false,"target_val_loss":0.0,"val_tokens":0,"warmup_steps":10,"weight_decay":0.1}}','','','',1795796172.2256700992,NULL,NULL,1,3,0,10,'');
INSERT INTO queue VALUES(5,5,'queued','local','small-lr-opt-p4-lr=0.00646-optimizer=adamw','{"data":{"jsonl_field":"text","path":"default","val_fraction":0.05,"val_path":""},"device":"cpu","dist":{"bucket_mb":25.0,"gpus":1,"timeout_s":600,"zero":0},"memory_check":true,"model":{"context":64,"dropout":0.0,"init_from":"","logit_softcap":0.0,"mlp_act":"gelu","n_embd":64,"n_head":2,"n_layer":2,"norm":"layernorm","position":"learned","preset":"nano","qk_norm":false,"qkv_bias":true,"tie_weights":true,"unet_skips":false,"value_embeddings":0,"vocab_pad_multiple":64,"vocab_size":50257,"zero_init_proj":false},"name":"small-lr-opt-p4-lr=0.00646-optimizer=adamw","opt":{"activation_checkpointing":false,"attention":"sdpa","cuda_graphs":false,"embed_lr":0.0,"fused_adamw":true,"fused_glue":false,"head_lr":0.0,"layers":"auto","muon_ns":"newton_schulz","optimizer":"adamw","pin_memory":"auto","precision":"auto","prefetch":true,"schedule":"cosine","sdpa_backend":"auto"},"threads":1,"train":{"batch_size":4,"batch_tokens":0,"batch_warmup":0,"beta1":0.9,"beta2":0.95,"checkpoint_dir":"","checkpoint_every":0,"checkpoint_keep":3,"checkpoint_minutes":0.0,"context":0,"decay_fraction":0.2,"eps":1e-08,"eval_batches":2,"eval_every":10,"eval_tasks":"","grad_accum":1,"grad_clip":1.0,"log_every":10,"lr":0.006463304070095649,"max_skipped_steps":5,"min_lr_ratio":0.1,"muon_lr":0.02,"muon_momentum":0.95,"normuon_beta2":0.95,"profile":true,"resume":"","sample_every":-1,"sample_prompt":"The","sample_temperature":0.8,"sample_tokens":48,"sample_top_k":40,"seed":1337,"seq_warmup":0,"steps":120,"stop_at_target":false,"target_val_loss":0.0,"val_tokens":0,"warmup_steps":10,"weight_decay":0.1}}','','','',1795796172.2257258891,NULL,NULL,1,4,0,10,'');
INSERT INTO queue VALUES(6,6,'queued','local','small-lr-opt-p5-lr=0.00646-optimizer=muon','{"data":{"jsonl_field":"text","path":"default","val_fraction":0.05,"val_path":""},"device":"cpu","dist":{"bucket_mb":25.0,"gpus":1,"timeout_s":600,"zero":0},"memory_check":true,"model":{"context":64,"dropout":0.0,"init_from":"","logit_softcap":0.0,"mlp_act":"gelu","n_embd":64,"n_head":2,"n_layer":2,"norm":"layernorm","position":"learned","preset":"nano","qk_norm":false,"qkv_bias":true,"tie_weights":true,"unet_skips":false,"value_embeddings":0,"vocab_pad_multiple":64,"vocab_size":50257,"zero_init_proj":false},"name":"small-lr-opt-p5-lr=0.00646-optimizer=muon","opt":{"activation_checkpointing":false,"attention":"sdpa","cuda_graphs":false,"embed_lr":0.0,"fused_adamw":true,"fused_glue":false,"head_lr":0.0,"layers":"auto","muon_ns":"newton_schulz","optimizer":"muon","pin_memory":"auto","precision":"auto","prefetch":true,"schedule":"cosine","sdpa_backend":"auto"},"threads":1,"train":{"batch_size":4,"batch_tokens":0,"batch_warmup":0,"beta1":0.9,"beta2":0.95,"checkpoint_dir":"","checkpoint_every":0,"checkpoint_keep":3,"checkpoint_minutes":0.0,"context":0,"decay_fraction":0.2,"eps":1e-08,"eval_batches":2,"eval_every":10,"eval_tasks":"","grad_accum":1,"grad_clip":1.0,"log_every":10,"lr":0.006463304070095649,"max_skipped_steps":5,"min_lr_ratio":0.1,"muon_lr":0.02,"muon_momentum":0.95,"normuon_beta2":0.95,"profile":true,"resume":"","sample_every":-1,"sample_prompt":"The","sample_temperature":0.8,"sample_tokens":48,"sample_top_k":40,"seed":1337,"seq_warmup":0,"steps":120,"stop_at_target":false,"target_val_loss":0.0,"val_tokens":0,"warmup_steps":10,"weight_decay":0.1}}','','','',1795796172.2257819175,NULL,NULL,1,5,0,10,'');
INSERT INTO queue VALUES(7,7,'queued','local','small-lr-opt-p6-lr=0.03-optimizer=adamw','{"data":{"jsonl_field":"text","path":"default","val_fraction":0.05,"val_path":""},"device":"cpu","dist":{"bucket_mb":25.0,"gpus":1,"timeout_s":600,"zero":0},"memory_check":true,"model":{"context":64,"dropout":0.0,"init_from":"","logit_softcap":0.0,"mlp_act":"gelu","n_embd":64,"n_head":2,"n_layer":2,"norm":"layernorm","position":"learned","preset":"nano","qk_norm":false,"qkv_bias":true,"tie_weights":true,"unet_skips":false,"value_embeddings":0,"vocab_pad_multiple":64,"vocab_size":50257,"zero_init_proj":false},"name":"small-lr-opt-p6-lr=0.03-optimizer=adamw","opt":{"activation_checkpointing":false,"attention":"sdpa","cuda_graphs":false,"embed_lr":0.0,"fused_adamw":true,"fused_glue":false,"head_lr":0.0,"layers":"auto","muon_ns":"newton_schulz","optimizer":"adamw","pin_memory":"auto","precision":"auto","prefetch":true,"schedule":"cosine","sdpa_backend":"auto"},"threads":1,"train":{"batch_size":4,"batch_tokens":0,"batch_warmup":0,"beta1":0.9,"beta2":0.95,"checkpoint_dir":"","checkpoint_every":0,"checkpoint_keep":3,"checkpoint_minutes":0.0,"context":0,"decay_fraction":0.2,"eps":1e-08,"eval_batches":2,"eval_every":10,"eval_tasks":"","grad_accum":1,"grad_clip":1.0,"log_every":10,"lr":0.029999999999999995,"max_skipped_steps":5,"min_lr_ratio":0.1,"muon_lr":0.02,"muon_momentum":0.95,"normuon_beta2":0.95,"profile":true,"resume":"","sample_every":-1,"sample_prompt":"The","sample_temperature":0.8,"sample_tokens":48,"sample_top_k":40,"seed":1337,"seq_warmup":0,"steps":120,"stop_at_target":false,"target_val_loss":0.0,"val_tokens":0,"warmup_steps":10,"weight_decay":0.1}}','','','',1795796172.2258429527,NULL,NULL,1,6,0,10,'');
INSERT INTO queue VALUES(8,8,'queued','local','small-lr-opt-p7-lr=0.03-optimizer=muon','{"data":{"jsonl_field":"text","path":"default","val_fraction":0.05,"val_path":""},"device":"cpu","dist":{"bucket_mb":25.0,"gpus":1,"timeout_s":600,"zero":0},"memory_check":true,"model":{"context":64,"dropout":0.0,"init_from":"","logit_softcap":0.0,"mlp_act":"gelu","n_embd":64,"n_head":2,"n_layer":2,"norm":"layernorm","position":"learned","preset":"nano","qk_norm":false,"qkv_bias":true,"tie_weights":true,"unet_skips":false,"value_embeddings":0,"vocab_pad_multiple":64,"vocab_size":50257,"zero_init_proj":false},"name":"small-lr-opt-p7-lr=0.03-optimizer=muon","opt":{"activation_checkpointing":false,"attention":"sdpa","cuda_graphs":false,"embed_lr":0.0,"fused_adamw":true,"fused_glue":false,"head_lr":0.0,"layers":"auto","muon_ns":"newton_schulz","optimizer":"muon","pin_memory":"auto","precision":"auto","prefetch":true,"schedule":"cosine","sdpa_backend":"auto"},"threads":1,"train":{"batch_size":4,"batch_tokens":0,"batch_warmup":0,"beta1":0.9,"beta2":0.95,"checkpoint_dir":"","checkpoint_every":0,"checkpoint_keep":3,"checkpoint_minutes":0.0,"context":0,"decay_fraction":0.2,"eps":1e-08,"eval_batches":2,"eval_every":10,"eval_tasks":"","grad_accum":1,"grad_clip":1.0,"log_every":10,"lr":0.029999999999999995,"max_skipped_steps":5,"min_lr_ratio":0.1,"muon_lr":0.02,"muon_momentum":0.95,"normuon_beta2":0.95,"profile":true,"resume":"","sample_every":-1,"sample_prompt":"The","sample_temperature":0.8,"sample_tokens":48,"sample_top_k":40,"seed":1337,"seq_warmup":0,"steps":120,"stop_at_target":false,"target_val_loss":0.0,"val_tokens":0,"warmup_steps":10,"weight_decay":0.1}}','','','',1795796172.2258920669,NULL,NULL,1,7,0,10,'');
INSERT INTO queue VALUES(9,9,'queued','local','nano-fp32-sdpa-fusedadam','{"data":{"jsonl_field":"text","path":"default","val_fraction":0.05,"val_path":""},"device":"cpu","dist":{"bucket_mb":25.0,"gpus":1,"timeout_s":600,"zero":0},"memory_check":true,"model":{"context":128,"dropout":0.0,"init_from":"","logit_softcap":0.0,"mlp_act":"gelu","n_embd":128,"n_head":4,"n_layer":4,"norm":"layernorm","position":"learned","preset":"nano","qk_norm":false,"qkv_bias":true,"tie_weights":true,"unet_skips":false,"value_embeddings":0,"vocab_pad_multiple":64,"vocab_size":50257,"zero_init_proj":false},"name":"nano-fp32-sdpa-fusedadam","opt":{"activation_checkpointing":false,"attention":"sdpa","cuda_graphs":false,"embed_lr":0.0,"fused_adamw":true,"fused_glue":false,"head_lr":0.0,"layers":"auto","muon_ns":"newton_schulz","optimizer":"adamw","pin_memory":"auto","precision":"fp32","prefetch":true,"schedule":"cosine","sdpa_backend":"auto"},"threads":0,"train":{"batch_size":16,"batch_tokens":0,"batch_warmup":0,"beta1":0.9,"beta2":0.95,"checkpoint_dir":"","checkpoint_every":0,"checkpoint_keep":3,"checkpoint_minutes":30.0,"context":0,"decay_fraction":0.2,"eps":1e-08,"eval_batches":8,"eval_every":100,"eval_tasks":"","grad_accum":1,"grad_clip":1.0,"log_every":10,"lr":0.004,"max_skipped_steps":5,"min_lr_ratio":0.1,"muon_lr":0.02,"muon_momentum":0.95,"normuon_beta2":0.95,"profile":true,"resume":"","sample_every":100,"sample_prompt":"The","sample_temperature":0.8,"sample_tokens":48,"sample_top_k":40,"seed":1337,"seq_warmup":0,"steps":5,"stop_at_target":false,"target_val_loss":0.0,"val_tokens":0,"warmup_steps":30,"weight_decay":0.1}}','','','',1795796172.2645919322,NULL,NULL,NULL,0,0,0,'');
CREATE TABLE sweep_rungs (
  queue_id INTEGER NOT NULL REFERENCES queue(id) ON DELETE CASCADE,
  rung INTEGER NOT NULL,
  step INTEGER NOT NULL,
  metric REAL,
  val_loss REAL,
  checkpoint TEXT NOT NULL DEFAULT '',
  promoted INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (queue_id, rung)
) WITHOUT ROWID;
CREATE TABLE queue_settings (
  key TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO queue_settings VALUES('paused','1');
CREATE TABLE kind_floors (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  kind TEXT NOT NULL,
  ms REAL NOT NULL,
  calls REAL NOT NULL,
  flops REAL NOT NULL,
  bytes REAL NOT NULL,
  floor_ms REAL NOT NULL,
  bound TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (run_id, position)
) WITHOUT ROWID;
CREATE TABLE machine_limits (
  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  matmul_flops REAL NOT NULL,
  matmul_source TEXT NOT NULL,
  memory_bytes_per_s REAL NOT NULL,
  memory_source TEXT NOT NULL
);
CREATE INDEX runs_status ON runs(status);
CREATE INDEX samples_run ON samples(run_id, step);
CREATE INDEX checkpoints_run ON checkpoints(run_id, step);
CREATE INDEX queue_state ON queue(state, position);
COMMIT;
PRAGMA user_version = 6;
PRAGMA application_id = 1416326507;
