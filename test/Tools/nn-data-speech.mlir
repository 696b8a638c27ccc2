// nn-data synthesize speech: the spoken-word task as WAV files and Kaldi
// directories, dev and test voices held out (SpeechTaskTest checks the
// audio and the tables; this checks the command line).
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-data synthesize speech %t/task --train-utterances 4 --dev-utterances 2 --test-utterances 2 --held-out-voices 1 --max-words 2 --seed 3 2>/dev/null | FileCheck %s
// CHECK: wrote 8 utterances to {{.+}}task (train 4, dev 2, test 2; task.json lists the voices of each split)
// RUN: ls %t/task %t/task/dev | FileCheck %s --check-prefix=FILES
// FILES: dev
// FILES-NEXT: task.json
// FILES-NEXT: test
// FILES-NEXT: tokens.txt
// FILES-NEXT: train
// FILES-NEXT: wav
// FILES: spk2utt
// FILES-NEXT: text
// FILES-NEXT: utt2spk
// FILES-NEXT: wav.scp
// RUN: ls %t/task/wav | wc -l | FileCheck %s --check-prefix=WAVS
// WAVS: 8

// Flags of one task are refused by the other.
// RUN: not nn-data synthesize speech 2>&1 | FileCheck %s --check-prefix=NO-DIR
// NO-DIR: nn-data: synthesize speech needs the directory to write
// RUN: not nn-data synthesize speech %t/x --features 3 2>&1 | FileCheck %s --check-prefix=SEGMENT-FLAG
// SEGMENT-FLAG: nn-data: --features is a flag of the segment task, not of 'synthesize speech'
// RUN: not nn-data synthesize %t/x.npz --vocabulary words 2>&1 | FileCheck %s --check-prefix=SPEECH-FLAG
// SPEECH-FLAG: nn-data: --vocabulary is a flag of 'synthesize speech DIR', not of the segment task
// RUN: not nn-data synthesize %t/x.npz %t/y 2>&1 | FileCheck %s --check-prefix=TWO
// TWO: nn-data: synthesize takes one output (OUT.npz, or 'speech DIR'), got '{{.+}}x.npz' and '{{.+}}y'
// RUN: not nn-data synthesize speech %t/x --vocabulary letters 2>&1 | FileCheck %s --check-prefix=VOCAB
// VOCAB: nn-data: unknown vocabulary 'letters' (known: digits, words)

// The task imports into shards: log-mel features and character labels,
// through a vocabulary of the training transcripts (written beside the
// data) or the task's own (all its words).
// RUN: nn-data import %t/task/train %t/train.npz --num-mel-bins 40 --threads 2 2>/dev/null | FileCheck %s --check-prefix=IMPORT
// IMPORT: wrote 4 utterances ({{.+}}-train-{{[0-9]+}} .. {{.+}}-train-{{[0-9]+}}) to {{.+}}train.npz
// IMPORT-NEXT: wrote the vocabulary ({{[0-9]+}} classes, blank 0) to {{.+}}train.tokens.txt
// RUN: head -2 %t/train.tokens.txt | FileCheck %s --check-prefix=TOKENS
// TOKENS: <blank>
// TOKENS-NEXT: ▁
// RUN: nn-data import %t/task/dev %t/dev.npz --num-mel-bins 40 --vocab %t/task/tokens.txt 2>/dev/null | FileCheck %s --check-prefix=DEV
// DEV: wrote 2 utterances
// DEV-NOT: vocabulary
// A directory whose every utterance is bad is an error; each is named.
// RUN: mkdir -p %t/bad && echo "r1 %t/missing.wav" > %t/bad/wav.scp && echo "r1 one" > %t/bad/text
// RUN: not nn-data import %t/bad %t/bad.npz 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: nn-data: skipped: {{.+}}wav.scp:1: {{.+}}missing.wav
// BAD: nn-data: no utterance of '{{.+}}bad' could be imported (1 unreadable audio)
