// nn-data import with a BPE vocabulary (SentencePiece): the training set
// trains the model (written beside the output with its tokens.txt: class 0
// the blank, 1 <unk>), dev is labeled with the training set's model, and
// the labels spell the transcripts back as words through the tokens
// alone (nn-decode --vocab reads them). Flags that choose the labels
// twice, a size that cannot be reached and a file that is not a model are
// errors before any audio is read.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-data synthesize speech %t/audio --vocabulary digits --train-utterances 30 --dev-utterances 3 --test-utterances 1 --held-out-voices 1 --max-words 3 --seed 4 >/dev/null 2>&1
// RUN: nn-data import %t/audio/train %t/train.npz --num-mel-bins 8 --bpe-vocab-size 24 2>/dev/null | FileCheck %s --check-prefix=TRAIN
// TRAIN: trained a BPE model of 24 classes on 30 transcripts, written to {{.+}}train.bpe.model
// TRAIN: wrote 30 utterances
// TRAIN: wrote the vocabulary (24 classes, blank 0) to {{.+}}train.tokens.txt
// RUN: FileCheck %s --check-prefix=TOKENS < %t/train.tokens.txt
// TOKENS: {{^}}<blank>{{$}}
// TOKENS-NEXT: {{^}}<unk>{{$}}
// TOKENS-NEXT: {{^}}▁
// RUN: nn-data import %t/audio/dev %t/dev.npz --num-mel-bins 8 --bpe-model %t/train.bpe.model 2>/dev/null | FileCheck %s --check-prefix=DEV
// DEV-NOT: trained
// DEV: wrote 3 utterances
// RUN: diff %t/train.tokens.txt %t/dev.tokens.txt
// RUN: %python %S/Inputs/spell-labels.py %t/dev.npz %t/train.tokens.txt %t/audio/dev/text
//
// RUN: not nn-data import %t/audio/dev %t/x.npz --bpe-vocab-size 24 --vocab %t/train.tokens.txt 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: nn-data: --vocab, --bpe-vocab-size and --bpe-model each choose the labels: give one
// RUN: not nn-data import %t/audio/dev %t/x.npz --bpe-vocab-size 2 2>&1 | FileCheck %s --check-prefix=SMALL
// SMALL: nn-data: --bpe-vocab-size 2: at least 3 (the blank, <unk> and one piece)
// RUN: not nn-data import %t/audio/dev %t/x.npz --bpe-vocab-size 4000 2>&1 | FileCheck %s --check-prefix=LARGE
// LARGE: nn-data: cannot train a BPE vocabulary of 4000 classes on these transcripts: {{.*}}Vocabulary size too high (4000)
// LARGE-NOT: imported
// RUN: not nn-data import %t/audio/dev %t/x.npz --bpe-model %t/train.tokens.txt 2>&1 | FileCheck %s --check-prefix=NOTMODEL
// NOTMODEL: nn-data: cannot load the BPE model '{{.+}}train.tokens.txt'
// RUN: not ls %t/x.npz
