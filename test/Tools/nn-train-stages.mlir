// nn-train --stages: a stage file's stages run in order (CTC, alignment,
// frame-wise CE, decoding dev with the CTC model, on small graphs),
// outputs in the work directory and the alignments and hypotheses next to
// the data; a rerun skips what is done, a changed stage reruns with what
// follows it; errors come before anything runs.
// (The recipe's figures are StagesTest's, on examples/recipe.)
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t && cp %S/Inputs/stages/* %t/
// RUN: nn-train --stages %t/stages.json > %t/first.log 2>&1
// RUN: FileCheck %s --check-prefix=FIRST < %t/first.log
// FIRST: nn-train: compiling stages[0] ('ctc'), ctc.mlir
// FIRST: nn-train: synthesizing data 'dev' (8 utterances of the segment task) in {{.*}}stages.work/data/dev
// FIRST: nn-train: stage 1/4 'ctc' (train, ctc.mlir): losses ctc, 1 epochs on 'train', dev 'dev'
// FIRST: [ctc] dev after step 2: ctc {{[0-9.]+}}
// FIRST: [ctc] parameters 'ctc' in {{.*}}stages.work/ctc/parameters.npz
// FIRST: nn-train: stage 2/4 'align' (align, align.mlir): 2 datasets with 'ctc'
// FIRST: [align] prior of 'train' (class frequencies on its best paths): {{([0-9.]+ ){7}[0-9.]+}}; scale 0.5
// FIRST: [align] aligned 'train' (32 utterances, {{[0-9]+}} frames, {{[0-9]+}} frames/s): 'train_aligned' in {{.*}}stages.work/data/train.align
// FIRST: [align] aligned 'dev' (8 utterances,
// FIRST: nn-train: stage 3/4 'ce' (train, ce.mlir): losses ce, 1 epochs on 'train_aligned', dev 'dev_aligned', from 'ctc'
// FIRST: [ce] starts from 'ctc': 1 of 1 parameters shared, 0 new
// FIRST: [ce] dev before step 1: ce {{[0-9.]+}} fer {{[0-9.]+}}
// FIRST: [ce] dev after step 2: ce {{[0-9.]+}} fer {{[0-9.]+}}
// FIRST: nn-train: stage 4/4 'decode' (decode, decode.mlir): 1 datasets with 'ctc'
// FIRST: [decode] decoded 'dev' (8 utterances, {{[0-9]+}} utterances/s): 'dev_decoded' in {{.*}}stages.work/data/dev.decode, hypotheses in {{.*}}stages.work/decode/dev.jsonl
// FIRST: [decode] 'dev' losses: ctc {{[0-9.]+}}
// FIRST: [decode] 'dev': label error rate {{[0-9.]+}}% ({{[0-9]+}} errors / {{[0-9]+}} labels, 8 utterances)
// FIRST: nn-train: all 4 stages done (4 ran, 0 done before); outputs in {{.*}}stages.work
// RUN: %python %S/Inputs/check-alignment-overlay.py %t/stages.work/data/train %t/stages.work/data/train.align 8 | FileCheck %s --check-prefix=OVERLAY
// OVERLAY: 1 shards, 32 utterances, {{[0-9]+}} frames aligned, 0 left out
// RUN: %python -c "import numpy as np, sys; z = np.load(sys.argv[1]); print(sorted(z.files))" %t/stages.work/ce/parameters.npz | FileCheck %s --check-prefix=PARAMS
// PARAMS: ['out.w']

// The decode stage's hypotheses: the overlay next to dev holds them, and
// numpy's greedy decoding of the CTC parameters gives the same;
// check-decode.py recomputes each reference, edit distance and the totals
// and prints the error rate the stage printed. The stage's dev.jsonl is
// what nn-decode --json writes for the same graph, parameters and data,
// and its error-rate.json holds that file's summary.
// RUN: %python -c "import numpy as np, sys; z = dict(np.load(sys.argv[1])); o = np.load(sys.argv[2]); z.update({k: o[k] for k in o.files}); p = np.load(sys.argv[3]); a = (z['features'].astype(np.float64) @ p['out.w'].astype(np.float64).T).argmax(-1); n = z['features.lengths']; s = np.concatenate([[0], np.cumsum(n)]); hyps = [[int(c) for i, c in enumerate(a[s[u]:s[u + 1]]) if c != 0 and (i == 0 or c != a[s[u] + i - 1])] for u in range(len(n))]; z['greedy'] = np.array(sum(hyps, []), np.int32); z['greedy.lengths'] = np.array([len(h) for h in hyps], np.int32); print(sorted(o.files)); np.savez(sys.argv[4], **z)" %t/stages.work/data/dev/shard-00000.npz %t/stages.work/data/dev.decode/shard-00000.npz %t/stages.work/ctc/parameters.npz %t/shard-00000.npz | FileCheck %s --check-prefix=HYP-OVERLAY
// HYP-OVERLAY: ['hyp', 'hyp.lengths', 'hyp.score']
// RUN: %python %S/Inputs/check-decode.py %t/shard-00000.npz %t/stages.work/decode/dev.jsonl hyp > %t/decode.expected
// RUN: grep -F "[decode] 'dev': label" %t/first.log | cut -d " " -f 3- | diff - %t/decode.expected
// RUN: %python %S/Inputs/check-decode.py %t/shard-00000.npz %t/stages.work/decode/dev.jsonl greedy | diff - %t/decode.expected
// RUN: nn-decode %t/decode.mlir --params %t/stages.work/ctc/parameters.npz --data %t/stages.work/data/dev --json > %t/nn-decode-dev.jsonl
// RUN: diff %t/nn-decode-dev.jsonl %t/stages.work/decode/dev.jsonl
// RUN: %python -c "import json, sys; rates = json.load(open(sys.argv[1])); summary = json.loads(open(sys.argv[2]).readlines()[-1])['summary']; assert list(rates) == ['dev'] and rates['dev'] == summary, (rates, summary); print('error-rate.json', sorted(summary))" %t/stages.work/decode/error-rate.json %t/stages.work/decode/dev.jsonl | FileCheck %s --check-prefix=RATES
// RATES: error-rate.json ['error_rate', 'errors', 'losses', 'ref_len', 'unit', 'utterances']

// A rerun skips every stage, without compiling them; --json gives one
// event per stage.
// RUN: nn-train --stages %t/stages.json 2>&1 | FileCheck %s --check-prefix=DONE
// DONE-NOT: compiling
// DONE: nn-train: stage 1/4 'ctc' (train): done in an earlier run, skipped
// DONE: nn-train: stage 4/4 'decode' (decode): done in an earlier run, skipped
// DONE: nn-train: all 4 stages done (0 ran, 4 done before)
// RUN: nn-train --stages %t/stages.json --json > %t/rerun.json
// RUN: FileCheck %s --check-prefix=AGAIN < %t/rerun.json
// AGAIN: {"stage": "ctc", "event": "skipped"}
// AGAIN-NEXT: {"stage": "align", "event": "skipped"}
// AGAIN-NEXT: {"stage": "ce", "event": "skipped"}
// AGAIN-NEXT: {"stage": "decode", "event": "skipped"}

// Changing the CE stage reruns it alone; changing the alignment reruns
// the alignment and the stage that reads it, not the CTC stage nor the
// decode stage, which reads neither; changing the decode stage reruns it
// alone.
// RUN: sed -i 's/"momentum": 0.9/"momentum": 0.5/' %t/stages.json
// RUN: nn-train --stages %t/stages.json --json > %t/ce.json
// RUN: FileCheck %s --check-prefix=CHANGED-CE < %t/ce.json
// CHANGED-CE: {"stage": "ctc", "event": "skipped"}
// CHANGED-CE-NEXT: {"stage": "align", "event": "skipped"}
// CHANGED-CE-NEXT: {"stage": "ce", "event": "start", "index": 3, "of": 4, "kind": "train"}
// CHANGED-CE: {"stage": "ce", "eval": "dev", "step": 0, "losses": {"ce": {{[0-9.e+-]+}}, "fer": {{[0-9.e+-]+}}}}
// CHANGED-CE-NEXT: {"stage": "ce", "step": 1, "lr": 0.001, "grad_norm": {{[0-9.e+-]+}}, "losses": {"ce": {{[0-9.e+-]+}}, "fer": {{[0-9.e+-]+}}}, "frames": {{[0-9]+}}, "applied": true}
// CHANGED-CE: {"stage": "ce", "event": "done"}
// CHANGED-CE-NEXT: {"stage": "decode", "event": "skipped"}
// RUN: sed -i 's/"scale": 0.5/"scale": 1.0/' %t/stages.json
// RUN: nn-train --stages %t/stages.json --json > %t/align.json
// RUN: FileCheck %s --check-prefix=CHANGED-ALIGN < %t/align.json
// CHANGED-ALIGN: {"stage": "ctc", "event": "skipped"}
// CHANGED-ALIGN-NEXT: {"stage": "align", "event": "start", "index": 2, "of": 4, "kind": "align"}
// CHANGED-ALIGN-NEXT: {"stage": "align", "event": "aligned", "data": "train", "writes": "train_aligned", "utterances": 32, "left_out": 0, "frames": {{[0-9]+}}, "path": "{{.*}}stages.work/data/train.align"}
// CHANGED-ALIGN: {"stage": "ce", "event": "start"
// CHANGED-ALIGN: {"stage": "ce", "event": "done"}
// CHANGED-ALIGN-NEXT: {"stage": "decode", "event": "skipped"}
// RUN: sed -i 's/"writes": {"data": \["dev_decoded"\]}/"writes": {"data": ["dev_decoded"]}, "batch_size": 3/' %t/stages.json
// RUN: nn-train --stages %t/stages.json --json > %t/decode.json
// RUN: FileCheck %s --check-prefix=CHANGED-DECODE < %t/decode.json
// CHANGED-DECODE: {"stage": "ctc", "event": "skipped"}
// CHANGED-DECODE-NEXT: {"stage": "align", "event": "skipped"}
// CHANGED-DECODE-NEXT: {"stage": "ce", "event": "skipped"}
// CHANGED-DECODE-NEXT: {"stage": "decode", "event": "start", "index": 4, "of": 4, "kind": "decode"}
// CHANGED-DECODE-NEXT: {"stage": "decode", "event": "decoded", "data": "dev", "writes": "dev_decoded", "utterances": 8, "left_out": 0, "error_rate": {{[0-9.e+-]+}}, "errors": {{[0-9]+}}, "ref_len": {{[0-9]+}}, "unit": "label", "path": "{{.*}}stages.work/data/dev.decode", "hypotheses": "{{.*}}stages.work/decode/dev.jsonl"}
// CHANGED-DECODE-NEXT: {"stage": "decode", "event": "done"}

// A stage whose outputs are gone runs again.
// RUN: rm %t/stages.work/ce/parameters.npz
// RUN: nn-train --stages %t/stages.json 2>&1 | FileCheck %s --check-prefix=GONE
// GONE: nn-train: compiling stages[2] ('ce'), ce.mlir
// GONE: nn-train: all 4 stages done (1 ran, 3 done before)
// RUN: rm %t/stages.work/decode/dev.jsonl
// RUN: nn-train --stages %t/stages.json 2>&1 | FileCheck %s --check-prefix=GONE-DECODE
// GONE-DECODE: nn-train: compiling stages[3] ('decode'), decode.mlir
// GONE-DECODE: nn-train: all 4 stages done (1 ran, 3 done before)

// Ctrl-C during a stage saves its checkpoint and stops (130); the same
// command resumes the stage from it.
// RUN: sed 's/"epochs": 1, "lr": "constant:peak=1e-2"/"steps": 100000000, "lr": "constant:peak=1e-2"/' %t/stages.json > %t/long.json
// RUN: not %python %S/Inputs/interrupt-after-first-line.py nn-train --stages %t/long.json --work-dir %t/long.work --json 2> %t/interrupt.log
// RUN: FileCheck %s --check-prefix=INTERRUPT < %t/interrupt.log
// INTERRUPT: nn-train: stage 'ctc' interrupted after step {{[0-9]+}}; checkpoint in {{.*}}long.work/ctc/checkpoints
// INTERRUPT-NEXT: nn-train: interrupted; the same command continues from the checkpoint
// RUN: not %python %S/Inputs/interrupt-after-first-line.py nn-train --stages %t/long.json --work-dir %t/long.work --json > %t/resume.json
// RUN: FileCheck %s --check-prefix=RESUME < %t/resume.json
// RESUME: {"stage": "ctc", "event": "start", "index": 1, "of": 4, "kind": "train"}
// RESUME-NEXT: {"stage": "ctc", "event": "resumed", "step": {{[0-9]+}}, "from": "{{.*}}long.work/ctc/checkpoints/step-{{[0-9]+}}.npz"}

// Errors, before anything runs.
// RUN: not nn-train --stages %t/stages.json --steps 3 %s 2>&1 | FileCheck %s --check-prefix=FLAGS
// FLAGS: nn-train: --stages takes every setting from the stage file; drop <model.mlir>, --steps
// RUN: not nn-train --stages %t/missing.json 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: nn-train: stage file: cannot open '{{.*}}missing.json': No such file or directory
// A stage file that is a FIFO (no writer) or /dev/zero is refused at once
// by what it is; one past 16 MiB by its size.
// RUN: mkfifo %t/fifo.json
// RUN: not timeout 60 nn-train --stages %t/fifo.json 2>&1 | FileCheck %s --check-prefix=FIFO
// FIFO: nn-train: stage file: '{{.*}}fifo.json' is a FIFO, not a regular file
// RUN: not timeout 60 nn-train --stages /dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: nn-train: stage file: '/dev/zero' is a character device, not a regular file
// RUN: %python -c "open('%t/huge.json', 'w').write(' ' * (16 << 20) + '{}')"
// RUN: not nn-train --stages %t/huge.json 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: nn-train: stage file: '{{.*}}huge.json' is too large: 16777218 bytes, more than the 16777216-byte limit for this file
// RUN: sed 's/"init": "ctc"/"init": "ce"/' %t/stages.json > %t/cycle.json
// RUN: not nn-train --stages %t/cycle.json --work-dir %t/never 2>&1 | FileCheck %s --check-prefix=ORDER
// ORDER: nn-train: {{.*}}cycle.json: stages[2] ('ce').reads.init: 'ce' is written by no earlier stage and is not declared data (known before this stage: ctc, dev, dev_aligned, train, train_aligned)
// RUN: not ls %t/never
// RUN: not nn-train %t/ctc.mlir --work-dir %t/w 2>&1 | FileCheck %s --check-prefix=WORKDIR
// WORKDIR: nn-train: --work-dir goes with --stages

// A --work-dir that holds what nn-train did not write is refused before
// anything compiles, naming it; nothing in it changes. A stage file that
// repeats a key is an error naming both places.
// RUN: mkdir -p %t/home/ctc/checkpoints && echo mine > %t/home/ctc/checkpoints/thesis.tex
// RUN: not nn-train --stages %t/stages.json --work-dir %t/home 2>&1 | FileCheck %s --check-prefix=FOREIGN
// FOREIGN: nn-train: {{.*}}stages.json: the work directory '{{.*}}home' holds 'ctc/', which nn-train did not write there: it writes, replaces and removes files in it, so it takes only a new or empty directory or one it wrote; move them away or choose another directory
// RUN: FileCheck %s --check-prefix=MINE < %t/home/ctc/checkpoints/thesis.tex
// MINE: mine
// RUN: sed 's/"epochs": 1, "lr": "constant:peak=1e-2"/"epochs": 1, "epochs": 1000000000, "lr": "constant:peak=1e-2"/' %t/stages.json > %t/twice.json
// RUN: not nn-train --stages %t/twice.json --work-dir %t/never 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: nn-train: {{.*}}twice.json:{{[0-9]+}}:{{[0-9]+}}: the key 'epochs' is given twice in one object (first at {{.*}}twice.json:{{[0-9]+}}:{{[0-9]+}}); JSON would keep only the last
// RUN: not ls %t/never

// A stage's done.json replaced by a FIFO is no record, and not a file
// nn-train wrote: an error naming it, not a read that waits forever for a
// writer.
// RUN: rm %t/stages.work/ce/done.json && mkfifo %t/stages.work/ce/done.json
// RUN: not timeout 120 nn-train --stages %t/stages.json 2>&1 | FileCheck %s --check-prefix=FIFO-DONE
// FIFO-DONE: nn-train: '{{.*}}stages.work/ce/done.json' is no longer the file nn-train wrote (it is a FIFO now); not removing it
