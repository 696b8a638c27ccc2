// nn-train --chunking: training on overlapping chunks of the utterances
// (dev data whole), and the errors of specs and graphs chunks cannot cut.
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-data synthesize %t/train.npz --features 12 --classes 6 --utterances 12 --seed 4
// RUN: nn-data synthesize %t/dev.npz --features 12 --classes 6 --utterances 4 --seed 5
// RUN: nn-train %S/Inputs/chunking/framewise.mlir --data %t/train.npz --dev %t/dev.npz --epochs 1 --batch-size 4 --chunking 10:6 --json > %t/chunked.json
// RUN: %python %S/Inputs/chunking/check-chunks.py %t/train.npz %t/chunked.json 10 6 4 | FileCheck %s --check-prefix=CHUNKED
// CHUNKED: 12 utterances, {{[0-9]+}} chunks, {{[0-9]+}} steps, 1 dev evaluations
// Chunks as long as every utterance: one chunk each, the plain run.
// RUN: nn-train %S/Inputs/chunking/framewise.mlir --data %t/train.npz --dev %t/dev.npz --epochs 1 --batch-size 4 --chunking 1000:1000 --json > %t/long.json
// RUN: nn-train %S/Inputs/chunking/framewise.mlir --data %t/train.npz --dev %t/dev.npz --epochs 1 --batch-size 4 --json > %t/plain.json
// RUN: diff %t/long.json %t/plain.json
//
// RUN: not nn-train %S/Inputs/chunking/framewise.mlir --data %t/train.npz --chunking 10:12 2>&1 | FileCheck %s --check-prefix=SKIPS
// SKIPS: nn-train: --chunking: chunking '10:12': a step longer than the chunk skips frames (expected SIZE:STEP
// RUN: not nn-train %S/Inputs/chunking/framewise.mlir --synthetic segments --chunking 10:6 2>&1 | FileCheck %s --check-prefix=SYNTHETIC
// SYNTHETIC: nn-train: chunking goes with --data; the synthetic task draws whole utterances
// RUN: not nn-train %S/Inputs/segments-small.mlir --data %t/train.npz --chunking 10:6 2>&1 | FileCheck %s --check-prefix=ALONG-U
// ALONG-U: nn-train: '{{.+}}train.npz': chunking 10:6 cuts the inputs along 'T', but input 'labels' runs along 'U', which chunks cannot cut alone: for a transducer's labels and alignment (RNA, or an RNN-T path) add ,labels=L,alignment=A,blank=ID
// RUN: not nn-train %S/Inputs/segments-small.mlir --data %t/train.npz --chunking 10:6,labels=labels,alignment=frame_labels 2>&1 | FileCheck %s --check-prefix=NO-WEIGHTS
// NO-WEIGHTS: chunking 10:6,labels=labels,alignment=frame_labels,blank=0: overlapping chunks share frames, which must count once: the graph needs an input 'chunk_weights' [batch, T] f32 that weights its per-frame losses (nn.mark_loss ... weights %chunk_weights)
