// nn-data writes datasets, and nn-train trains on them (--data, --dev).
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_utterances.py %t/utterances
// RUN: nn-data convert %t/utterances %t/train.npz | FileCheck %s --check-prefix=CONVERT
// CONVERT: wrote 6 utterances (utt00 .. utt05) to {{.+}}train.npz
// RUN: %python -c "import numpy as np, sys; z = np.load(sys.argv[1]); print(z['features'].shape, list(z['features.lengths']), list(z['labels.lengths']))" %t/train.npz | FileCheck %s --check-prefix=LAYOUT
// LAYOUT: (75, 12) [5, 8, 11, 14, 17, 20] [1, 2, 3, 1, 2, 3]
// Each utterance's id, from its file names, as code points in nn.id.
// RUN: %python -c "import numpy as np, sys; z = np.load(sys.argv[1]); print(z['nn.id'].dtype, list(z['nn.id.lengths']), ''.join(map(chr, z['nn.id'])))" %t/train.npz | FileCheck %s --check-prefix=IDS
// IDS: int32 [5, 5, 5, 5, 5, 5] utt00utt01utt02utt03utt04utt05

// Shards in a directory, and a synthetic dev set.
// RUN: nn-data convert %t/utterances %t/sharded --shard-utterances 4 | FileCheck %s --check-prefix=SHARDS
// SHARDS: wrote 6 utterances (utt00 .. utt05) to {{.+}}sharded
// RUN: ls %t/sharded | FileCheck %s --check-prefix=SHARD-FILES
// SHARD-FILES: shard-00000.npz
// SHARD-FILES-NEXT: shard-00001.npz
// RUN: nn-data synthesize %t/dev.npz --features 12 --classes 6 --utterances 8 --seed 4 | FileCheck %s --check-prefix=SYNTH
// SYNTH: wrote 8 utterances (seg-000000 .. seg-000007) to {{.+}}dev.npz
// RUN: %python -c "import numpy as np, sys; z = np.load(sys.argv[1]); print(list(z['nn.id.lengths']), ''.join(map(chr, z['nn.id'][-10:])))" %t/dev.npz | FileCheck %s --check-prefix=SYNTH-IDS
// SYNTH-IDS: [10, 10, 10, 10, 10, 10, 10, 10] seg-000007

// Two epochs of budgeted batches (at most 2 sequences and 30 padded
// frames): 6 utterances make 4 batches an epoch here.
// RUN: nn-train %S/Inputs/segments-small.mlir --data %t/sharded --dev %t/dev.npz --epochs 2 --batch-size 2 --max-frames 30 --json > %t/train.json
// RUN: %python %S/Inputs/check-train-json.py %t/train.json 1 8 ce,fer,ctc | FileCheck %s --check-prefix=EPOCHS
// EPOCHS: steps 1..8, 2 dev evaluations

// Bad data is an error before training, naming the file.
// RUN: %python %S/Inputs/make_utterances.py %t/partial --drop labels
// RUN: not nn-data convert %t/partial %t/partial.npz 2>&1 | FileCheck %s --check-prefix=PARTIAL
// PARTIAL: nn-data: utterance 'utt05' has no 'labels' (utterance 'utt00' has)
// An input array may not take the name of the lengths nn-data computes.
// RUN: cp -r %t/utterances %t/reserved
// RUN: %python -c "import numpy as np, sys; np.save(sys.argv[1], np.array([1], np.int32))" %t/reserved/utt00.features.lengths.npy
// RUN: not nn-data convert %t/reserved %t/reserved.npz 2>&1 | FileCheck %s --check-prefix=RESERVED
// RESERVED: nn-data: '{{.+}}utt00.features.lengths.npy': the array name 'features.lengths' ends in '.lengths', which the dataset format reserves for the lengths nn-data computes; rename the file
// Ids are file names' <utterance> parts, which may hold any character but
// whitespace and controls (an id is the first token of nn-decode's plain
// lines); non-ASCII ids are stored as their code points.
// RUN: mkdir -p %t/named
// RUN: cp %t/utterances/utt00.features.npy %t/named/été.features.npy
// RUN: cp %t/utterances/utt00.features.npy "%t/named/spaced id.features.npy"
// RUN: not nn-data convert %t/named %t/named.npz 2>&1 | FileCheck %s --check-prefix=SPACED-ID
// SPACED-ID: nn-data: '{{.+}}spaced id.features.npy': the utterance id 'spaced id' holds whitespace (U+0020) at position 6
// RUN: rm "%t/named/spaced id.features.npy"
// RUN: nn-data convert %t/named %t/named.npz
// RUN: %python -c "import numpy as np, sys; z = np.load(sys.argv[1]); print(list(z['nn.id']))" %t/named.npz | FileCheck %s --check-prefix=UNICODE-ID
// UNICODE-ID: [233, 116, 233]
// An input array may not take the ids' name.
// RUN: cp %t/utterances/utt00.labels.npy %t/named/x.nn.id.npy
// RUN: not nn-data convert %t/named %t/reserved-id.npz 2>&1 | FileCheck %s --check-prefix=RESERVED-ID
// RESERVED-ID: nn-data: '{{.+}}x.nn.id.npy': the array name 'nn.id' is reserved for the utterance ids nn-data writes from the file names; rename the file
// Noise and sizes the features or the machine cannot hold.
// RUN: not nn-data synthesize %t/inf.npz --noise inf 2>&1 | FileCheck %s --check-prefix=NOISE-INF
// NOISE-INF: nn-data: for the --noise option: 'inf' is not a finite number
// RUN: not nn-data synthesize %t/huge.npz --noise 1e308 2>&1 | FileCheck %s --check-prefix=NOISE-HUGE
// NOISE-HUGE: nn-data: segment task: noise must be a number in [0, 1e6], got 1e+308
// RUN: not nn-data synthesize %t/many.npz --features 80 --utterances 4000000000 2>&1 | FileCheck %s --check-prefix=TOO-MANY
// TOO-MANY: nn-data: segment task: 4000000000 utterances of up to 66 frames of 80 features (and 10 class prototypes) take up to {{.+}} GiB, more than half of this machine's {{.+}} GiB
// RUN: not nn-data synthesize %t/twice.npz --seed 1 --seed 2 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: nn-data: --seed is given more than once; give it once
// RUN: not ls %t/inf.npz %t/huge.npz %t/many.npz %t/twice.npz %t/reserved.npz %t/reserved-id.npz
// RUN: not nn-train %S/Inputs/segments-small.mlir --data %t/missing.npz 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: nn-train: cannot open dataset '{{.+}}missing.npz'
// RUN: nn-data synthesize %t/wide.npz --features 13 --classes 6 --utterances 2
// RUN: not nn-train %S/Inputs/segments-small.mlir --data %t/wide.npz 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: nn-train: dataset shard '{{.+}}wide.npz': array 'features' is f32 [{{[0-9]+}}, 13], which does not fit the graph input [B, T, 12] f32
// RUN: nn-data synthesize %t/many.npz --features 12 --classes 9 --utterances 20
// RUN: not nn-train %S/Inputs/segments-small.mlir --data %t/many.npz 2>&1 | FileCheck %s --check-prefix=CLASSES
// CLASSES: nn-train: dataset shard '{{.+}}many.npz': utterance {{[0-9]+}}: '{{frame_labels|labels}}' holds class {{[6-8]}} at position {{[0-9]+}}, outside [0, 6)
// RUN: not nn-train %S/Inputs/segments-small.mlir --data %t/train.npz --synthetic segments 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: nn-train: give --data or --synthetic, not both
