// nn-decode writes a hypothesis per utterance under its id and scores it
// against the dataset's references. The graphs below decode without a
// search: @labels returns its label input (every hypothesis is its
// reference), @frames its frame labels (a known nonzero error rate that
// check-decode.py computes again in plain Python, with the ids, words and
// totals), each over an input sequence dim whose lengths the batch gives.
// REQUIRES: numpy
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/make_utterances.py %t/utterances
// RUN: nn-data convert %t/utterances %t/data.npz
// RUN: %python -c "import numpy as np, sys; r = np.random.default_rng(0); np.savez(sys.argv[1], **{'out.w': r.standard_normal((6, 12)).astype(np.float32), 'out.b': np.zeros(6, np.float32)})" %t/params.npz

// JSON lines: one object per utterance in dataset order, then the summary.
// RUN: nn-decode %s --entry labels --params %t/params.npz --data %t/data.npz --batch-size 4 --json > %t/labels.jsonl
// RUN: FileCheck %s --check-prefix=JSON < %t/labels.jsonl
// JSON: {"utt": "utt00", "hyp": {{\[}}[[LABEL:[0-9]]]], "ref": {{\[}}[[LABEL]]], "errors": 0, "ref_len": 1}
// JSON-NEXT: {"utt": "utt01", "hyp": {{\[}}[[A:[0-9]]], [[B:[0-9]]]], "ref": {{\[}}[[A]], [[B]]], "errors": 0, "ref_len": 2}
// JSON-NEXT: {"utt": "utt02",
// JSON-NEXT: {"utt": "utt03",
// JSON-NEXT: {"utt": "utt04",
// JSON-NEXT: {"utt": "utt05",
// JSON-NEXT: {"summary": {"utterances": 6, "errors": 0, "ref_len": 12, "error_rate": 0, "unit": "label", "losses": {"ce": {{[0-9.e+-]+}}, "fer": {{[0-9.e+-]+}}}}}
// JSON-NOT: {
// RUN: %python %S/Inputs/check-decode.py %t/data.npz %t/labels.jsonl labels | FileCheck %s --check-prefix=LABELS-RATE
// LABELS-RATE: label error rate 0.00% (0 errors / 12 labels, 6 utterances)

// A nonzero rate, with scores; the plain lines and the stderr summary.
// RUN: nn-decode %s --entry frames --params %t/params.npz --data %t/data.npz --json > %t/frames.jsonl
// RUN: FileCheck %s --check-prefix=SCORED < %t/frames.jsonl
// SCORED: {"utt": "utt00", "hyp": [{{[0-9], [0-9], [0-9], [0-9], [0-9]}}], "score": {{[0-9.e+-]+}}, "ref": [{{[0-9]}}], "errors": 5, "ref_len": 1}
// SCORED: {"summary": {"utterances": 6, "errors": [[ERRORS:[0-9]+]], "ref_len": 12, "error_rate": {{[0-9.e+-]+}}, "unit": "label", "losses": {}}}
// RUN: %python %S/Inputs/check-decode.py %t/data.npz %t/frames.jsonl frame_labels > %t/frames.expected
// RUN: FileCheck %s --check-prefix=FRAMES-RATE < %t/frames.expected
// FRAMES-RATE: label error rate 566.67% (68 errors / 12 labels, 6 utterances)
// RUN: nn-decode %s --entry frames --params %t/params.npz --data %t/data.npz > %t/frames.txt 2> %t/frames.err
// RUN: tail -n 1 %t/frames.err | diff - %t/frames.expected
// RUN: FileCheck %s --check-prefix=PLAIN < %t/frames.txt
// PLAIN: utt00{{( [0-9]){5}$}}
// PLAIN-NEXT: utt01{{( [0-9]){8}$}}
// PLAIN-NEXT: utt02{{( [0-9]){11}$}}
// PLAIN-NEXT: utt03{{( [0-9]){14}$}}
// PLAIN-NEXT: utt04{{( [0-9]){17}$}}
// PLAIN-NEXT: utt05{{( [0-9]){20}$}}
// RUN: count 6 < %t/frames.txt
// --out writes the same lines to a file, nothing to stdout.
// RUN: nn-decode %s --entry frames --params %t/params.npz --data %t/data.npz --out %t/frames-out.txt > %t/stdout.txt 2> /dev/null
// RUN: diff %t/frames.txt %t/frames-out.txt
// RUN: count 0 < %t/stdout.txt
// RUN: not ls %t/frames-out.txt.partial

// Words through a vocabulary: each token a word, or SentencePiece pieces
// ("\u2581" starts a word).
// RUN: nn-decode %s --entry frames --params %t/params.npz --data %t/data.npz --vocab %S/Inputs/decode-tokens.txt --json > %t/tokens.jsonl
// RUN: %python %S/Inputs/check-decode.py %t/data.npz %t/tokens.jsonl frame_labels %S/Inputs/decode-tokens.txt | FileCheck %s --check-prefix=TOKENS
// TOKENS: word error rate 566.67% (68 errors / 12 words, 6 utterances)
// RUN: nn-decode %s --entry frames --params %t/params.npz --data %t/data.npz --vocab %S/Inputs/decode-pieces.txt --json > %t/pieces.jsonl
// RUN: %python %S/Inputs/check-decode.py %t/data.npz %t/pieces.jsonl frame_labels %S/Inputs/decode-pieces.txt > %t/pieces.expected
// RUN: FileCheck %s --check-prefix=PIECES < %t/pieces.expected
// PIECES: word error rate {{[0-9.]+}}% ({{[0-9]+}} errors / 8 words, 6 utterances)
// RUN: nn-decode %s --entry frames --params %t/params.npz --data %t/data.npz --vocab %S/Inputs/decode-pieces.txt > %t/pieces.txt 2> %t/pieces.err
// RUN: tail -n 1 %t/pieces.err | diff - %t/pieces.expected
// RUN: FileCheck %s --check-prefix=PIECES-TEXT < %t/pieces.txt
// PIECES-TEXT: utt00 {{[^0-9]+$}}
// RUN: nn-decode %s --entry labels --params %t/params.npz --data %t/data.npz --vocab %S/Inputs/decode-pieces.txt --json | FileCheck %s --check-prefix=TEXT
// TEXT: {"utt": "utt00", "hyp": [{{[0-9]}}], "text": "{{.+}}", "ref": [{{[0-9]}}], "ref_text": "{{.+}}", "errors": 0, "ref_len": 1}

// Without references: no scores, in both formats.
// RUN: %python -c "import numpy as np, sys; z = dict(np.load(sys.argv[1])); [z.pop(k) for k in ('labels', 'labels.lengths')]; np.savez(sys.argv[2], **z)" %t/data.npz %t/unlabelled.npz
// RUN: nn-decode %s --entry unlabelled --params %t/params.npz --data %t/unlabelled.npz --json | FileCheck %s --check-prefix=NO-REF
// NO-REF: {"utt": "utt00", "hyp": [{{[0-9, ]+}}]}
// NO-REF: {"summary": {"utterances": 6, "losses": {}}}
// RUN: nn-decode %s --entry unlabelled --params %t/params.npz --data %t/unlabelled.npz 2>&1 >/dev/null | FileCheck %s --check-prefix=NO-REF-PLAIN
// NO-REF-PLAIN: decoded 6 utterances (no references)
// --ref= turns the default references off.
// RUN: nn-decode %s --entry frames --params %t/params.npz --data %t/data.npz --ref= --json | FileCheck %s --check-prefix=REF-OFF
// REF-OFF: {"utt": "utt00", "hyp": [{{[0-9, ]+}}], "score": {{[0-9.e+-]+}}}

// The graph's losses add up over the dataset as nn-train's dev evaluation
// adds them: a checkpoint decoded reports the numbers nn-train printed
// for it (its optimizer state ignored).
// RUN: nn-train %s --entry labels --data %t/data.npz --dev %t/data.npz --steps 2 --batch-size 4 --save %t/ckpt --json > %t/train.json
// RUN: nn-decode %s --entry labels --params %t/ckpt/step-00000002.npz --data %t/data.npz --json > %t/trained.jsonl
// RUN: %python -c "import json, sys; dev = [json.loads(l) for l in open(sys.argv[1]) if '\"eval\"' in l][-1]['losses']; got = json.loads(open(sys.argv[2]).readlines()[-1])['summary']['losses']; assert got['fer'] == dev['fer'] and abs(got['ce'] - dev['ce']) <= 1e-6 * abs(dev['ce']), (got, dev); print('same losses', sorted(got))" %t/train.json %t/trained.jsonl | FileCheck %s --check-prefix=SAME
// SAME: same losses ['ce', 'fer']

// Search ops: greedy CTC decoding and the prefix beam search return
// hypotheses over a dim whose lengths they compute (lengths:Y). The
// greedy hypotheses are recomputed in plain numpy (argmax of the linear
// layer's logits, repeats merged, blanks dropped); a beam of 1 with merge
// max gives the same.
// RUN: %python -c "import numpy as np, sys; z = dict(np.load(sys.argv[1])); p = np.load(sys.argv[2]); f = z['features'].astype(np.float64); a = (f @ p['out.w'].astype(np.float64).T + p['out.b']).argmax(-1); n = z['features.lengths']; s = np.concatenate([[0], np.cumsum(n)]); hyps = [[int(c) for i, c in enumerate(a[s[u]:s[u + 1]]) if c != 0 and (i == 0 or c != a[s[u] + i - 1])] for u in range(len(n))]; z['greedy'] = np.array(sum(hyps, []), np.int32); z['greedy.lengths'] = np.array([len(h) for h in hyps], np.int32); np.savez(sys.argv[3], **z)" %t/data.npz %t/params.npz %t/with-greedy.npz
// RUN: nn-decode %s --entry greedy --params %t/params.npz --data %t/with-greedy.npz --json > %t/greedy.jsonl
// RUN: %python %S/Inputs/check-decode.py %t/with-greedy.npz %t/greedy.jsonl greedy | FileCheck %s --check-prefix=GREEDY
// GREEDY: label error rate {{[0-9.]+}}% ({{[0-9]+}} errors / 12 labels, 6 utterances)
// RUN: nn-decode %s --entry beam1 --params %t/params.npz --data %t/with-greedy.npz --json > %t/beam1.jsonl
// RUN: %python %S/Inputs/check-decode.py %t/with-greedy.npz %t/beam1.jsonl greedy | FileCheck %s --check-prefix=GREEDY
// --beam replaces the written beam. @sum1 is written with beam 1 and
// merge sum; with --beam 8 more prefixes keep their mass, so some
// utterance's score (a prefix probability) changes: the same scores would
// mean the option was ignored. The option is refused for a graph without
// a beam search, or beam 0.
// RUN: nn-decode %s --entry sum1 --params %t/params.npz --data %t/with-greedy.npz --json > %t/sum1.jsonl
// RUN: nn-decode %s --entry sum1 --beam 8 --params %t/params.npz --data %t/with-greedy.npz --json > %t/sum8.jsonl
// RUN: %python -c "import json, sys; a = [json.loads(l) for l in open(sys.argv[1])][:-1]; b = [json.loads(l) for l in open(sys.argv[2])][:-1]; assert len(a) == len(b) == 6; assert any(abs(x['score'] - y['score']) > 1e-6 for x, y in zip(a, b)), 'beam 8 scored like beam 1'; print('beam 8 scores differ')" %t/sum1.jsonl %t/sum8.jsonl | FileCheck %s --check-prefix=WIDER
// WIDER: beam 8 scores differ
// RUN: not nn-decode %s --entry greedy --beam 4 --params %t/params.npz --data %t/with-greedy.npz 2>&1 | FileCheck %s --check-prefix=NO-SEARCH
// NO-SEARCH: nn-decode: a search beam is given, but graph @greedy runs no beam search (nn.ctc_beam_search, nn.transducer_beam_search)
// RUN: not nn-decode %s --entry beam1 --beam 0 --params %t/params.npz --data %t/with-greedy.npz 2>&1 | FileCheck %s --check-prefix=BEAM-ZERO
// BEAM-ZERO: nn-decode: --beam must be at least 1

// N-best lists: @nbest returns [B, K, Y] labels and [B, K] scores; each
// JSON line's nbest holds them best first (at most the beam, distinct,
// scores not increasing) and hyp and score are its first. With merge max
// the best is the best path, so the greedy references score it exactly.
// RUN: nn-decode %s --entry nbest --params %t/params.npz --data %t/with-greedy.npz --json > %t/nbest.jsonl
// RUN: %python %S/Inputs/check-decode.py %t/with-greedy.npz %t/nbest.jsonl greedy | FileCheck %s --check-prefix=GREEDY
// RUN: %python -c "import json, sys; ls = [json.loads(l) for l in open(sys.argv[1])][:-1]; assert len(ls) == 6; [(lambda n: (1 <= len(n) <= 4 and n[0]['hyp'] == l['hyp'] and n[0]['score'] == l['score'] and all(a['score'] >= b['score'] for a, b in zip(n, n[1:])) and len(set(tuple(h['hyp']) for h in n)) == len(n)) or sys.exit('bad list %r' % l))(l['nbest']) for l in ls]; print('lists of', sorted(set(len(l['nbest']) for l in ls)))" %t/nbest.jsonl | FileCheck %s --check-prefix=NBEST
// NBEST: lists of [{{.*}}4]
// RUN: nn-decode %s --entry nbest --params %t/params.npz --data %t/with-greedy.npz > %t/nbest.txt 2> /dev/null
// RUN: nn-decode %s --entry beam1 --params %t/params.npz --data %t/with-greedy.npz > %t/beam1.txt 2> /dev/null
// RUN: diff %t/nbest.txt %t/beam1.txt

// An utterance without frames (utt03x, between utt03 and utt04, with
// reference [2, 3, 4]) is decoded as the empty hypothesis at its place in
// the dataset: its three labels are deletions in the error rate, and it
// is counted as without_frames, not left_out. @labels would return the
// reference itself, so only the empty hypothesis gives 3 errors; the old
// rule (left out) gave 0 errors / 12 labels, 6 utterances.
// RUN: cp -r %t/utterances %t/frameless-utterances
// RUN: %python -c "import numpy as np, sys; d = sys.argv[1] + '/utt03x.'; np.save(d + 'features.npy', np.zeros((0, 12), np.float32)); np.save(d + 'frame_labels.npy', np.zeros(0, np.int32)); np.save(d + 'labels.npy', np.array([2, 3, 4], np.int32))" %t/frameless-utterances
// RUN: nn-data convert %t/frameless-utterances %t/frameless.npz
// RUN: nn-decode %s --entry labels --params %t/params.npz --data %t/frameless.npz --batch-size 3 --json | FileCheck %s --check-prefix=FRAMELESS
// FRAMELESS: {"utt": "utt03",
// FRAMELESS-NEXT: {"utt": "utt03x", "hyp": [], "ref": [2, 3, 4], "errors": 3, "ref_len": 3}
// FRAMELESS-NEXT: {"utt": "utt04",
// FRAMELESS: {"summary": {"utterances": 7, "without_frames": 1, "errors": 3, "ref_len": 15, "error_rate": 0.2, "unit": "label",
// RUN: nn-decode %s --entry labels --params %t/params.npz --data %t/frameless.npz 2>&1 >/dev/null | FileCheck %s --check-prefix=FRAMELESS-RATE
// FRAMELESS-RATE: nn-decode: 1 utterances without frames along 'T': the empty hypothesis (not run through the graph; its losses do not count them)
// FRAMELESS-RATE: label error rate 20.00% (3 errors / 15 labels, 7 utterances)
// Graphs that decode frames agree with the plain Python count; the plain
// output lists the utterance (its id alone), and a search graph gives it
// the score 0 and an N-best list of the empty hypothesis.
// RUN: nn-decode %s --entry frames --params %t/params.npz --data %t/frameless.npz --batch-size 2 --json > %t/frameless.jsonl
// RUN: %python %S/Inputs/check-decode.py %t/frameless.npz %t/frameless.jsonl frame_labels > %t/frameless.expected
// RUN: FileCheck %s --check-prefix=FRAMELESS-FRAMES < %t/frameless.expected
// FRAMELESS-FRAMES: label error rate {{[0-9.]+}}% ({{[0-9]+}} errors / 15 labels, 7 utterances)
// RUN: nn-decode %s --entry frames --params %t/params.npz --data %t/frameless.npz --batch-size 2 > %t/frameless.txt 2> %t/frameless.err
// RUN: tail -n 1 %t/frameless.err | diff - %t/frameless.expected
// RUN: FileCheck %s --check-prefix=FRAMELESS-PLAIN < %t/frameless.txt
// FRAMELESS-PLAIN: utt03{{( [0-9]){14}$}}
// FRAMELESS-PLAIN-NEXT: {{^utt03x$}}
// FRAMELESS-PLAIN-NEXT: utt04{{( [0-9]){17}$}}
// RUN: nn-decode %s --entry nbest --params %t/params.npz --data %t/frameless.npz --json | FileCheck %s --check-prefix=FRAMELESS-NBEST
// FRAMELESS-NBEST: {"utt": "utt03x", "hyp": [], "score": 0, "ref": [2, 3, 4], "errors": 3, "ref_len": 3, "nbest": [{"hyp": [], "score": 0}]}
// Utterances nn.keep leaves out stay left out (utt00 here).
// RUN: %python -c "import numpy as np, sys; z = dict(np.load(sys.argv[1])); z['nn.keep'] = np.array([0, 1, 1, 1, 1, 1, 1], np.int32); np.savez(sys.argv[2], **z)" %t/frameless.npz %t/frameless-kept.npz
// RUN: nn-decode %s --entry labels --params %t/params.npz --data %t/frameless-kept.npz --json | FileCheck %s --check-prefix=FRAMELESS-KEEP
// FRAMELESS-KEEP-NOT: "utt00"
// FRAMELESS-KEEP: {"summary": {"utterances": 6, "left_out": 1, "without_frames": 1, "errors": 3, "ref_len": 14,
// The graph's losses leave it out, as nn-train's dev evaluation does.
// RUN: nn-train %s --entry labels --data %t/data.npz --dev %t/frameless.npz --steps 2 --batch-size 4 --save %t/frameless-ckpt --json > %t/frameless-train.json
// RUN: nn-decode %s --entry labels --params %t/frameless-ckpt/step-00000002.npz --data %t/frameless.npz --json > %t/frameless-trained.jsonl
// RUN: %python -c "import json, sys; dev = [json.loads(l) for l in open(sys.argv[1]) if '\"eval\"' in l][-1]['losses']; got = json.loads(open(sys.argv[2]).readlines()[-1])['summary']['losses']; assert got['fer'] == dev['fer'] and abs(got['ce'] - dev['ce']) <= 1e-6 * abs(dev['ce']), (got, dev); print('same losses', sorted(got))" %t/frameless-train.json %t/frameless-trained.jsonl | FileCheck %s --check-prefix=SAME

// Synthesized data carries ids seg-<index>.
// RUN: nn-data synthesize %t/synth.npz --features 12 --classes 6 --utterances 3
// RUN: nn-decode %s --entry labels --params %t/params.npz --data %t/synth.npz | FileCheck %s --check-prefix=SYNTH
// SYNTH: seg-000000 {{[0-9 ]+$}}
// SYNTH-NEXT: seg-000001
// SYNTH-NEXT: seg-000002

// Errors name the file and the field.
// RUN: not nn-decode %s --entry labels --params %t/params.npz --data %t/data.npz --ref nosuch 2>&1 | FileCheck %s --check-prefix=NO-ARRAY
// NO-ARRAY: nn-decode: dataset shard '{{.+}}data.npz': no array 'nosuch' [sum of lengths] i32 with 'nosuch.lengths'
// RUN: not nn-decode %s --entry logits --params %t/params.npz --data %t/data.npz 2>&1 | FileCheck %s --check-prefix=NOT-LABELS
// NOT-LABELS: nn-decode: '{{.+}}nn-decode.mlir': graph @logits result0 (f32 [B, T, 6]) is not a hypothesis per sequence: expected [B, Y] i32 (B the batch, Y the labels' sequence dim)
// RUN: not nn-decode %s --entry losses_only --params %t/params.npz --data %t/data.npz 2>&1 | FileCheck %s --check-prefix=NO-RESULTS
// NO-RESULTS: nn-decode: '{{.+}}nn-decode.mlir': graph @losses_only returns no results; a decoding graph returns its hypotheses as result0, [B, Y] i32 (and their scores as result1, [B] f32)
// RUN: not nn-decode %s --entry labels --data %t/data.npz 2>&1 | FileCheck %s --check-prefix=NO-PARAMS
// NO-PARAMS: nn-decode: graph @labels has 2 parameters (the first 'out.w'): give their trained values with --params FILE.npz
// RUN: %python -c "import numpy as np, sys; np.savez(sys.argv[1], **{'out.w': np.zeros((6, 12), np.float32)})" %t/partial-params.npz
// RUN: not nn-decode %s --entry labels --params %t/partial-params.npz --data %t/data.npz 2>&1 | FileCheck %s --check-prefix=LACKS
// LACKS: nn-decode: '{{.+}}partial-params.npz' lacks parameter 'out.b' of graph @labels
// RUN: not nn-decode %s --entry labels --params %t/params.npz 2>&1 | FileCheck %s --check-prefix=NO-DATA
// NO-DATA: nn-decode: no data: give --data DIR (a dataset nn-data writes)
// RUN: not nn-decode %s --entry labels --params %t/params.npz --data %t/missing.npz 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: nn-decode: cannot open dataset '{{.+}}missing.npz'
// RUN: printf 'a\nb\n' > %t/short-vocab.txt
// RUN: not nn-decode %s --entry labels --params %t/params.npz --data %t/data.npz --vocab %t/short-vocab.txt 2>&1 | FileCheck %s --check-prefix=OUTSIDE-VOCAB
// OUTSIDE-VOCAB: nn-decode: utterance 'utt00': the hypothesis: label {{[2-5]}} at position 0 is outside vocabulary '{{.+}}short-vocab.txt' (2 tokens, labels 0..1)
// An id that is not one (a space in it), and two utterances with one id.
// RUN: %python -c "import numpy as np, sys; z = dict(np.load(sys.argv[1])); z['nn.id'][8] = 32; np.savez(sys.argv[2], **z)" %t/data.npz %t/spaced.npz
// RUN: not nn-decode %s --entry labels --params %t/params.npz --data %t/spaced.npz 2>&1 | FileCheck %s --check-prefix=BAD-ID
// BAD-ID: nn-decode: dataset shard '{{.+}}spaced.npz': utterance 1: 'nn.id' holds whitespace (U+0020) at position 3
// RUN: %python -c "import numpy as np, sys; z = dict(np.load(sys.argv[1])); z['nn.id'][9] = ord('0'); np.savez(sys.argv[2], **z)" %t/data.npz %t/repeated.npz
// RUN: not nn-decode %s --entry labels --params %t/params.npz --data %t/repeated.npz 2>&1 | FileCheck %s --check-prefix=SAME-ID
// SAME-ID: nn-decode: utterance id 'utt00' names both utterance 0 of '{{.+}}repeated.npz' and utterance 1 of '{{.+}}repeated.npz'; nn-decode names each hypothesis by its id
// RUN: not nn-decode %s --entry labels --params %t/params.npz --data %t/data.npz --out %t/no-such-dir/out.txt 2>&1 | FileCheck %s --check-prefix=OUT-DIR
// OUT-DIR: nn-decode: cannot write '{{.+}}no-such-dir/out.txt.partial': No such file or directory

nn.parameter @"out.w" : !nn.tensor<[6, 12], f32>
nn.parameter @"out.b" : !nn.tensor<[6], f32>

// The references themselves, with a trained loss and a reported error.
nn.graph @labels(%features: !nn.tensor<[B, T, 12], f32>,
                 %frame_labels: !nn.tensor<[B, T], i32>,
                 %labels: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, U], i32>
    dims [B: batch, T: seq(B), U: seq(B)] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[6, 12], f32>
  %b = nn.param_ref @"out.b" : !nn.tensor<[6], f32>
  %logits = nn.linear %features, %w, %b : !nn.tensor<[B, T, 12], f32>, !nn.tensor<[6, 12], f32>, !nn.tensor<[6], f32>
  %ce = nn.cross_entropy %logits, %frame_labels from logits
      : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %err = nn.frame_error %logits, %frame_labels : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %err as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  nn.return %labels : !nn.tensor<[B, U], i32>
}

// The frame labels as hypotheses, scored by the CTC loss of the labels.
nn.graph @frames(%features: !nn.tensor<[B, T, 12], f32>,
                 %frame_labels: !nn.tensor<[B, T], i32>,
                 %labels: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[6, 12], f32>
  %logits = nn.linear %features, %w : !nn.tensor<[B, T, 12], f32>, !nn.tensor<[6, 12], f32>
  %ctc = nn.ctc_loss %logits, %labels from logits blank 0
      : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, U], i32>
  nn.return %frame_labels, %ctc : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}

// No label input: a dataset without references decodes.
nn.graph @unlabelled(%features: !nn.tensor<[B, T, 12], f32>,
                     %frame_labels: !nn.tensor<[B, T], i32>)
    -> !nn.tensor<[B, T], i32>
    dims [B: batch, T: seq(B)] {
  nn.return %frame_labels : !nn.tensor<[B, T], i32>
}

// Scores per frame, not labels.
nn.graph @logits(%features: !nn.tensor<[B, T, 12], f32>)
    -> !nn.tensor<[B, T, 6], f32>
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[6, 12], f32>
  %logits = nn.linear %features, %w : !nn.tensor<[B, T, 12], f32>, !nn.tensor<[6, 12], f32>
  nn.return %logits : !nn.tensor<[B, T, 6], f32>
}

// Greedy CTC decoding of the linear layer's logits.
nn.graph @greedy(%features: !nn.tensor<[B, T, 12], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[6, 12], f32>
  %b = nn.param_ref @"out.b" : !nn.tensor<[6], f32>
  %logits = nn.linear %features, %w, %b : !nn.tensor<[B, T, 12], f32>, !nn.tensor<[6, 12], f32>, !nn.tensor<[6], f32>
  %y, %s = nn.ctc_greedy_decode %logits from logits blank 0
      : !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}

// The prefix search with one best path kept: greedy again.
nn.graph @beam1(%features: !nn.tensor<[B, T, 12], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[6, 12], f32>
  %b = nn.param_ref @"out.b" : !nn.tensor<[6], f32>
  %logits = nn.linear %features, %w, %b : !nn.tensor<[B, T, 12], f32>, !nn.tensor<[6, 12], f32>, !nn.tensor<[6], f32>
  %y, %s = nn.ctc_beam_search %logits from logits blank 0 beam 1 merge max
      : !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}

// Every surviving prefix of a beam of 4 (merge max), best first.
nn.graph @nbest(%features: !nn.tensor<[B, T, 12], f32>)
    -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>)
    dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K),
          Y: seq(H) computed] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[6, 12], f32>
  %b = nn.param_ref @"out.b" : !nn.tensor<[6], f32>
  %logits = nn.linear %features, %w, %b : !nn.tensor<[B, T, 12], f32>, !nn.tensor<[6, 12], f32>, !nn.tensor<[6], f32>
  %y, %s = nn.ctc_beam_search %logits from logits blank 0 beam 4 merge max
      : !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  nn.return %y, %s : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
}

// The prefix search with merge sum, written with beam 1 (--beam widens it).
nn.graph @sum1(%features: !nn.tensor<[B, T, 12], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[6, 12], f32>
  %b = nn.param_ref @"out.b" : !nn.tensor<[6], f32>
  %logits = nn.linear %features, %w, %b : !nn.tensor<[B, T, 12], f32>, !nn.tensor<[6, 12], f32>, !nn.tensor<[6], f32>
  %y, %s = nn.ctc_beam_search %logits from logits blank 0 beam 1 merge sum
      : !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}

// Losses and no results.
nn.graph @losses_only(%features: !nn.tensor<[B, T, 12], f32>,
                      %frame_labels: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[6, 12], f32>
  %logits = nn.linear %features, %w : !nn.tensor<[B, T, 12], f32>, !nn.tensor<[6, 12], f32>
  %ce = nn.cross_entropy %logits, %frame_labels from logits
      : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
