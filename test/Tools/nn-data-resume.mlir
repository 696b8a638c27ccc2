// nn-data import resumes an interrupted import: finished chunks of
// features wait in OUT/import.partial until the output is complete, a
// rerun reuses them, and the result equals an uninterrupted import byte
// for byte. (KaldiImportTest checks which chunks are reused when entries
// or audio change.)
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-data synthesize speech %t/task --train-utterances 6 --dev-utterances 1 --test-utterances 1 --held-out-voices 1 --max-words 2 --seed 9 >/dev/null 2>&1
// RUN: nn-data import %t/task/train %t/fresh --shard-utterances 2 --num-mel-bins 20 --vocab %t/task/tokens.txt --cmvn global --threads 2 >%t/fresh.out 2>%t/fresh.err
// RUN: FileCheck %s --check-prefix=PROGRESS < %t/fresh.err
// PROGRESS: imported {{[0-9]+}} / 6 ({{[0-9]+}}%)
// PROGRESS: imported 6 / 6 (100%), {{[0-9.]+}}/s
// RUN: not ls %t/fresh/import.partial

// Interrupted after every chunk is done: the second shard cannot be
// written (a folder is in its place).
// RUN: mkdir -p %t/out/shard-00001.npz/blocked
// RUN: not nn-data import %t/task/train %t/out --shard-utterances 2 --num-mel-bins 20 --vocab %t/task/tokens.txt --cmvn global 2>&1 | FileCheck %s --check-prefix=FAILED
// FAILED: nn-data: {{.*}}shard-00001.npz
// RUN: ls %t/out/import.partial | FileCheck %s --check-prefix=WORK
// WORK: chunk-000000.npz
// WORK-NEXT: chunk-000000.txt
// RUN: rm -r %t/out/shard-00001.npz
// RUN: nn-data import %t/task/train %t/out --shard-utterances 2 --num-mel-bins 20 --vocab %t/task/tokens.txt --cmvn global 2>/dev/null | FileCheck %s --check-prefix=RESUMED
// RESUMED: resumed an interrupted import: 6 utterances from {{.+}}import.partial
// RESUMED-NEXT: wrote 6 utterances
// RUN: cmp %t/fresh/shard-00000.npz %t/out/shard-00000.npz
// RUN: cmp %t/fresh/shard-00001.npz %t/out/shard-00001.npz
// RUN: cmp %t/fresh/shard-00002.npz %t/out/shard-00002.npz
// RUN: cmp %t/fresh/cmvn.npz %t/out/cmvn.npz
// RUN: not ls %t/out/import.partial
