//===- OpCases.cpp - one small graph per op family ------------------------===//
//
// Shared by the CPU lowering tests and the GPU tests: each graph exercises
// one family of ops on padded and packed frames.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include <fstream>
#include <sstream>

using namespace nn::testing;

namespace {
const std::vector<OpCase> kCases = {
    {"linear", R"(
nn.parameter @w : !nn.tensor<[5, 3], f32>
nn.parameter @b : !nn.tensor<[5], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 5], f32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[5, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[5], f32>
  %y = nn.linear %x, %w, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>, !nn.tensor<[5], f32>
  %z = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>
  nn.return %y, %z : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 5], f32>
})"},
    {"linear_packed_input", R"(
nn.graph @g(%x: !nn.tensor<[N, 3], f32>, %w: !nn.tensor<[4, 3], f32>, %t: !nn.tensor<[B, T], f32>)
    -> !nn.tensor<[N, 4], f32>
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %y = nn.linear %x, %w : !nn.tensor<[N, 3], f32>, !nn.tensor<[4, 3], f32>
  nn.return %y : !nn.tensor<[N, 4], f32>
})"},
    {"elementwise", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>,
        !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>,
        !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 2], f32>,
        !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %a = nn.add %x, %y : !nn.tensor<[B, T, 4], f32>
  %h = nn.scale %y by -2.500000e-01 : !nn.tensor<[B, T, 4], f32>
  %m = nn.mul %x, %y : !nn.tensor<[B, T, 4], f32>
  %r = nn.relu %x : !nn.tensor<[B, T, 4], f32>
  %t = nn.tanh %x : !nn.tensor<[B, T, 4], f32>
  %s = nn.sigmoid %x : !nn.tensor<[B, T, 4], f32>
  %g = nn.gelu %x : !nn.tensor<[B, T, 4], f32>
  %d = nn.dropout %x rate 5.000000e-01 : !nn.tensor<[B, T, 4], f32>
  %w = nn.silu %x : !nn.tensor<[B, T, 4], f32>
  %u = nn.glu %x : !nn.tensor<[B, T, 4], f32>
  nn.return %a, %m, %r, %t, %s, %g, %d, %w, %u, %h : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>,
      !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>,
      !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>,
      !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 4], f32>
})"},
    {"normalizations", R"(
nn.parameter @gain : !nn.tensor<[6], f32>
nn.parameter @b : !nn.tensor<[6], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 6], f32>)
    -> (!nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>)
    dims [B: batch, T: seq(B)] {
  %gain = nn.param_ref @gain : !nn.tensor<[6], f32>
  %bias = nn.param_ref @b : !nn.tensor<[6], f32>
  %s = nn.softmax %x : !nn.tensor<[B, T, 6], f32>
  %l = nn.log_softmax %x : !nn.tensor<[B, T, 6], f32>
  %n = nn.layer_norm %x, %gain, %bias : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[6], f32>, !nn.tensor<[6], f32>
  nn.return %s, %l, %n : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>
})"},
    {"embedding_concat", R"(
nn.parameter @table : !nn.tensor<[7, 3], f32>
nn.graph @g(%ids: !nn.tensor<[B, T], i32>, %x: !nn.tensor<[B, T, 2], f32>)
    -> !nn.tensor<[B, T, 5], f32>
    dims [B: batch, T: seq(B)] {
  %table = nn.param_ref @table : !nn.tensor<[7, 3], f32>
  %e = nn.embedding %ids, %table : !nn.tensor<[B, T], i32>, !nn.tensor<[7, 3], f32>
  %c = nn.concat %e, %x : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 2], f32>
  nn.return %c : !nn.tensor<[B, T, 5], f32>
})"},
    {"lstm", R"(
nn.parameter @wi : !nn.tensor<[12, 4], f32>
nn.parameter @wh : !nn.tensor<[12, 3], f32>
nn.parameter @b : !nn.tensor<[12], f32>
nn.parameter @bwi : !nn.tensor<[2, 8, 4], f32>
nn.parameter @bwh : !nn.tensor<[2, 8, 2], f32>
nn.parameter @bb : !nn.tensor<[2, 8], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %wi = nn.param_ref @wi : !nn.tensor<[12, 4], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[12, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[12], f32>
  %f = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[12, 4], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>
  %r = nn.lstm backward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[12, 4], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>
  %bwi = nn.param_ref @bwi : !nn.tensor<[2, 8, 4], f32>
  %bwh = nn.param_ref @bwh : !nn.tensor<[2, 8, 2], f32>
  %bb = nn.param_ref @bb : !nn.tensor<[2, 8], f32>
  %bi = nn.lstm bidirectional %x, %bwi, %bwh, %bb : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[2, 8, 4], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>
  nn.return %f, %r, %bi : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 4], f32>
})"},
    {"conv_pool", R"(
nn.parameter @w1 : !nn.tensor<[3, 3, 2], f32>
nn.parameter @b1 : !nn.tensor<[3], f32>
nn.parameter @w2 : !nn.tensor<[2, 2, 2], f32>
nn.parameter @w3 : !nn.tensor<[4, 3, 1], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 2], f32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T2, 2], f32>, !nn.tensor<[B, T2, 2], f32>,
        !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T2, 4], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %w1 = nn.param_ref @w1 : !nn.tensor<[3, 3, 2], f32>
  %b1 = nn.param_ref @b1 : !nn.tensor<[3], f32>
  %w2 = nn.param_ref @w2 : !nn.tensor<[2, 2, 2], f32>
  %w3 = nn.param_ref @w3 : !nn.tensor<[4, 3, 1], f32>
  %c1 = nn.conv1d %x, %w1, %b1 stride 1 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[3, 3, 2], f32>, !nn.tensor<[3], f32>) -> !nn.tensor<[B, T, 3], f32>
  %c2 = nn.conv1d %x, %w2 stride 2 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[2, 2, 2], f32>) -> !nn.tensor<[B, T2, 2], f32>
  %p1 = nn.pool max %x window 3 stride 2 : (!nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T2, 2], f32>
  %p2 = nn.pool avg %x window 2 stride 1 : (!nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T, 2], f32>
  %c3 = nn.conv1d %x, %w3 stride 2 groups 2 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[4, 3, 1], f32>) -> !nn.tensor<[B, T2, 4], f32>
  nn.return %c1, %c2, %p1, %p2, %c3 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T2, 2], f32>,
      !nn.tensor<[B, T2, 2], f32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T2, 4], f32>
})"},
    // Self-attention without a mask, with each mask, with a given scale;
    // cross-attention from a second sequence dim U; rotary position
    // embeddings, and their inverse; relative positions from a table of
    // distances -2 ... 2 (longer distances clip), with a causal mask too.
    {"attention", R"(
nn.parameter @wpos : !nn.tensor<[4, 6], f32>
nn.graph @g(%q: !nn.tensor<[B, T, 4], f32>, %k: !nn.tensor<[B, T, 4], f32>,
            %v: !nn.tensor<[B, T, 6], f32>, %u: !nn.tensor<[B, U, 4], f32>)
    -> (!nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>,
        !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, U, 6], f32>, !nn.tensor<[B, T, 4], f32>,
        !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>,
        !nn.tensor<[5, 4], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %wpos = nn.param_ref @wpos : !nn.tensor<[4, 6], f32>
  %p = nn.relative_positions %wpos : !nn.tensor<[4, 6], f32> -> !nn.tensor<[5, 4], f32>
  %rel = nn.attention %q, %k, %v relative %k, %p heads 2 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  %relc = nn.attention %q, %k, %v relative %q, %p heads 1 causal : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  %a = nn.attention %q, %k, %v heads 2 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 6], f32>
  %c = nn.attention %q, %k, %v heads 2 causal left_context 2 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 6], f32>
  %h = nn.attention %q, %k, %v heads 1 chunk_size 3 left_chunks 1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 6], f32>
  %r = nn.attention %q, %k, %v heads 2 scale 5.000000e-01 left_context 1 right_context 1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 6], f32>
  %x = nn.attention %u, %k, %v heads 2 : !nn.tensor<[B, U, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 6], f32>
  %ro = nn.rotary %q heads 2 base 1.000000e+01 : !nn.tensor<[B, T, 4], f32>
  %ri = nn.rotary %k heads 1 inverse : !nn.tensor<[B, T, 4], f32>
  nn.return %a, %c, %h, %r, %x, %ro, %ri, %rel, %relc, %p : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>,
      !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, U, 6], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>,
      !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[5, 4], f32>
})"},
    {"attention_packed_input", R"(
nn.graph @g(%q: !nn.tensor<[N, 4], f32>, %k: !nn.tensor<[N, 4], f32>,
            %v: !nn.tensor<[N, 2], f32>, %u: !nn.tensor<[M, 4], f32>, %t: !nn.tensor<[B, T], f32>, %s: !nn.tensor<[B, U], f32>,
            %p: !nn.tensor<[7, 4], f32>)
    -> (!nn.tensor<[N, 2], f32>, !nn.tensor<[M, 2], f32>, !nn.tensor<[N, 4], f32>, !nn.tensor<[N, 2], f32>)
    dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T), M: packed(B, U)] {
  %rel = nn.attention %q, %k, %v relative %k, %p heads 2 : !nn.tensor<[N, 4], f32>, !nn.tensor<[N, 4], f32>, !nn.tensor<[N, 2], f32>, !nn.tensor<[N, 4], f32>, !nn.tensor<[7, 4], f32>
  %a = nn.attention %q, %k, %v heads 2 causal : !nn.tensor<[N, 4], f32>, !nn.tensor<[N, 4], f32>, !nn.tensor<[N, 2], f32>
  %x = nn.attention %u, %k, %v heads 1 : !nn.tensor<[M, 4], f32>, !nn.tensor<[N, 4], f32>, !nn.tensor<[N, 2], f32>
  %r = nn.rotary %q heads 2 base 1.000000e+01 : !nn.tensor<[N, 4], f32>
  nn.return %a, %x, %r, %rel : !nn.tensor<[N, 2], f32>, !nn.tensor<[M, 2], f32>, !nn.tensor<[N, 4], f32>, !nn.tensor<[N, 2], f32>
})"},
    {"reduce", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>)
    dims [B: batch, T: seq(B)] {
  %s = nn.reduce sum %x over 1 : !nn.tensor<[B, T, 3], f32>
  %m = nn.reduce mean %x over 1 : !nn.tensor<[B, T, 3], f32>
  %x2 = nn.reduce max %x over 1 : !nn.tensor<[B, T, 3], f32>
  nn.return %s, %m, %x2 : !nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>
})"},
    {"frame_losses", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, T], i32>, %r: !nn.tensor<[B, T, 5], f32>)
    dims [B: batch, T: seq(B)] {
  %ce = nn.cross_entropy %x, %y from logits label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %lp = nn.log_softmax %x : !nn.tensor<[B, T, 5], f32>
  %ce2 = nn.cross_entropy %lp, %y from log_probs : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce2 as "ce_lp" normalize per_sequence scale 2.000000e+00 : !nn.tensor<[B, T], f32>
  %e = nn.mse %x, %r : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 5], f32>
  nn.mark_loss %e as "mse" normalize sum as_error : !nn.tensor<[B, T], f32>
  %err = nn.frame_error %x, %y : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %err as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  nn.return
})"},
    {"ctc", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %l: !nn.tensor<[B, U], i32>, %k: !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %c = nn.ctc_loss %x, %l from logits blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %c as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  %lp = nn.log_softmax %x : !nn.tensor<[B, T, 4], f32>
  %z = nn.ctc_loss %lp, %l from log_probs blank 3 zero_infinity : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %z, %k as "ctc_zi" normalize custom : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
})"},
    // Labels of two independent sequence dims and of one dim against itself,
    // and words separated by class 2 (runs of it, and at the ends, are
    // frequent). The embeddings make them class indices of 3 classes, which the
    // synthetic inputs draw from [0, 3): matches and ties are frequent.
    {"edit_distance", R"(
nn.parameter @table : !nn.tensor<[3, 2], f32>
nn.graph @g(%hyp: !nn.tensor<[B, Y], i32>, %ref: !nn.tensor<[B, U], i32>, %alt: !nn.tensor<[B, Y], i32>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>,
        !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>,
        !nn.tensor<[B, Y, 4], f32>, !nn.tensor<[B, U, 2], f32>)
    dims [B: batch, Y: seq(B), U: seq(B)] {
  %e, %n, %c = nn.edit_distance %hyp, %ref : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %e, %n as "ler" normalize custom as_error : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  %se, %sn, %sc = nn.edit_distance %alt, %hyp : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, Y], i32>
  nn.mark_loss %se as "self" normalize per_sequence as_error : !nn.tensor<[B], f32>
  %we, %wn, %wc = nn.edit_distance %hyp, %ref words separator 2 : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %we, %wn as "wer" normalize custom as_error : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  %table = nn.param_ref @table : !nn.tensor<[3, 2], f32>
  %eh = nn.embedding %hyp, %table : !nn.tensor<[B, Y], i32>, !nn.tensor<[3, 2], f32>
  %ea = nn.embedding %alt, %table : !nn.tensor<[B, Y], i32>, !nn.tensor<[3, 2], f32>
  %er = nn.embedding %ref, %table : !nn.tensor<[B, U], i32>, !nn.tensor<[3, 2], f32>
  %ey = nn.concat %eh, %ea : !nn.tensor<[B, Y, 2], f32>, !nn.tensor<[B, Y, 2], f32>
  nn.return %e, %n, %c, %se, %sc, %ey, %er : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>,
      !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>, !nn.tensor<[B, Y, 4], f32>, !nn.tensor<[B, U, 2], f32>
})"},
    {"transducer", R"(
nn.graph @g(%e: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>, %l: !nn.tensor<[B, U], i32>, %g: !nn.tensor<[B], f32>)
    -> (!nn.tensor<[B, U1], i32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, T, U1, 4], f32>,
        !nn.tensor<[J, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1), N_T: packed(B, T), N_U1: packed(B, U1)] {
  %s = nn.prepend_start %l start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %j = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  %r = nn.transducer_loss %j, %l from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %r as "rnnt" normalize per_sequence : !nn.tensor<[B], f32>
  %dj = nn.transducer_loss_grad %g, %j, %l from logits topology rnnt blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  %de, %dp = nn.transducer_join_grad %dj : !nn.tensor<[J, 4], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>
  %jd = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[B, T, U1, 4], f32>
  %lp = nn.log_softmax %jd : !nn.tensor<[B, T, U1, 4], f32>
  %a = nn.transducer_loss %lp, %l from log_probs topology rna blank 3 zero_infinity : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %a as "rna" normalize per_sequence : !nn.tensor<[B], f32>
  %da = nn.transducer_loss_grad %g, %lp, %l from log_probs topology rna blank 3 zero_infinity : !nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  // The join and its gradient on packed operands (the encoder packed, the
  // prediction packed, each read from and written to its own rows).
  %pe = nn.pack %e : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[N_T, 4], f32>
  %pp = nn.pack %p : !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[N_U1, 4], f32>
  %jp = nn.transducer_join %pe, %pp : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  %jm = nn.transducer_join %pe, %p : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  %js = nn.add %jp, %jm : !nn.tensor<[J, 4], f32>
  %dpe, %dpp = nn.transducer_join_grad %dj : !nn.tensor<[J, 4], f32> -> !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_U1, 4], f32>
  %ude = nn.unpack %dpe : !nn.tensor<[N_T, 4], f32> -> !nn.tensor<[B, T, 4], f32>
  %udp = nn.unpack %dpp : !nn.tensor<[N_U1, 4], f32> -> !nn.tensor<[B, U1, 4], f32>
  nn.return %s, %de, %dp, %da, %js, %ude, %udp : !nn.tensor<[B, U1], i32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, T, U1, 4], f32>,
      !nn.tensor<[J, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>
})"},
    {"alignment", R"(
nn.parameter @prior : !nn.tensor<[4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %e: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>, %l: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %pr = nn.param_ref @prior : !nn.tensor<[4], f32>
  %ca, %cs = nn.viterbi_align %x, %l from logits topology ctc blank 0 prior %pr : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>, !nn.tensor<[4], f32>
  %ra, %rs = nn.viterbi_align %x, %l from log_probs topology rna blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  %j = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  %ta, %ts = nn.transducer_align %j, %l from logits topology rna blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  nn.return %ca, %cs, %ra, %rs, %ta, %ts : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
})"},
    {"ctc_greedy_decode", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Y1], i32>)
    dims [B: batch, T: seq(B), N: packed(B, T), Y: seq(B) computed, Y1: seq(B) = Y + 1, Z: seq(B) computed] {
  %y, %s = nn.ctc_greedy_decode %x from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %lp = nn.log_softmax %x : !nn.tensor<[B, T, 4], f32>
  %p = nn.pack %lp : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[N, 4], f32>
  %z, %zs = nn.ctc_greedy_decode %p from log_probs blank 2 : !nn.tensor<[N, 4], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  %y1 = nn.prepend_start %y start 0 : !nn.tensor<[B, Y], i32> -> !nn.tensor<[B, Y1], i32>
  %c = nn.ctc_loss %x, %y from logits blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, Y], i32>
  nn.mark_loss %c as "ctc_of_best_path" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return %y, %s, %z, %zs, %y1 : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Y1], i32>
})"},
    {"ctc_beam_search", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T), Y: seq(B) computed, Z: seq(B) computed] {
  %y, %s = nn.ctc_beam_search %x from logits blank 0 beam 3 merge sum : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %lp = nn.log_softmax %x : !nn.tensor<[B, T, 4], f32>
  %p = nn.pack %lp : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[N, 4], f32>
  %z, %zs = nn.ctc_beam_search %p from log_probs blank 3 beam 2 merge max token_beam 3 score_beam 4.0 : !nn.tensor<[N, 4], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  %c = nn.ctc_loss %x, %y from logits blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, Y], i32>
  nn.mark_loss %c as "ctc_of_best" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return %y, %s, %z, %zs : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
})"},
    // N-best lists as a batch: K hypotheses per sequence given as an
    // input dim (H = flatten(B, K) then follows at entry), moved to H and
    // back, sequences repeated per hypothesis and summed back.
    {"beam_layout", R"(
nn.graph @g(%x: !nn.tensor<[B, K, 3], f32>, %l: !nn.tensor<[B, K], i32>, %z: !nn.tensor<[B, T, 2], f32>, %u: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[H, 3], f32>, !nn.tensor<[H], i32>, !nn.tensor<[B, K, 3], f32>, !nn.tensor<[H, TH, 2], f32>,
        !nn.tensor<[H, UH], i32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, K, 2], f32>)
    dims [B: batch, T: seq(B), U: seq(B), K: seq(B), H: batch = flatten(B, K), TH: seq(H) = T, UH: seq(H) = U] {
  %xf = nn.flatten_beam %x : !nn.tensor<[B, K, 3], f32> -> !nn.tensor<[H, 3], f32>
  %lf = nn.flatten_beam %l : !nn.tensor<[B, K], i32> -> !nn.tensor<[H], i32>
  %xu = nn.unflatten_beam %xf : !nn.tensor<[H, 3], f32> -> !nn.tensor<[B, K, 3], f32>
  %zh = nn.repeat_beam %z : !nn.tensor<[B, T, 2], f32> -> !nn.tensor<[H, TH, 2], f32>
  %uh = nn.repeat_beam %u : !nn.tensor<[B, U], i32> -> !nn.tensor<[H, UH], i32>
  %e = nn.tanh %zh : !nn.tensor<[H, TH, 2], f32>
  %s = nn.sum_beam %e : !nn.tensor<[H, TH, 2], f32> -> !nn.tensor<[B, T, 2], f32>
  %m = nn.reduce sum %zh over 1 : !nn.tensor<[H, TH, 2], f32>
  %mu = nn.unflatten_beam %m : !nn.tensor<[H, 2], f32> -> !nn.tensor<[B, K, 2], f32>
  nn.return %xf, %lf, %xu, %zh, %uh, %s, %mu : !nn.tensor<[H, 3], f32>, !nn.tensor<[H], i32>, !nn.tensor<[B, K, 3], f32>, !nn.tensor<[H, TH, 2], f32>, !nn.tensor<[H, UH], i32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, K, 2], f32>
})"},
    // The N-best list of a search, rescored as a batch of hypotheses: CTC
    // of each against the repeated scores, errors against the repeated
    // references, both returned per sequence.
    {"ctc_beam_search_nbest", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %r: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[H, Y], i32>)
    dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed, TH: seq(H) = T, UH: seq(H) = U] {
  %y, %s = nn.ctc_beam_search %x from logits blank 0 beam 3 merge sum : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  %yh = nn.flatten_beam %y : !nn.tensor<[B, K, Y], i32> -> !nn.tensor<[H, Y], i32>
  %xh = nn.repeat_beam %x : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[H, TH, 4], f32>
  %c = nn.ctc_loss %xh, %yh from logits blank 0 zero_infinity : !nn.tensor<[H, TH, 4], f32>, !nn.tensor<[H, Y], i32>
  %rh = nn.repeat_beam %r : !nn.tensor<[B, U], i32> -> !nn.tensor<[H, UH], i32>
  %e, %n, %counts = nn.edit_distance %yh, %rh : !nn.tensor<[H, Y], i32>, !nn.tensor<[H, UH], i32>
  nn.mark_loss %e, %n as "ler" normalize custom as_error : !nn.tensor<[H], f32>, !nn.tensor<[H], f32>
  %ck = nn.unflatten_beam %c : !nn.tensor<[H], f32> -> !nn.tensor<[B, K], f32>
  %ek = nn.unflatten_beam %e : !nn.tensor<[H], f32> -> !nn.tensor<[B, K], f32>
  nn.return %y, %s, %ck, %ek, %yh : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[H, Y], i32>
})"},
    // Greedy transducer decoding through a predictor (embedding, then
    // tanh of a linear over the label and the state) and a joiner graph,
    // RNN-T with up to 2 labels per frame and RNA.
    {"transducer_greedy_decode", R"(
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.parameter @wp : !nn.tensor<[4, 8], f32>
nn.parameter @bp : !nn.tensor<[4], f32>
nn.parameter @wj : !nn.tensor<[5, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>)
    -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %w = nn.param_ref @wp : !nn.tensor<[4, 8], f32>
  %b = nn.param_ref @bp : !nn.tensor<[4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[5, 4], f32>
  %c = nn.concat %x, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
  %l = nn.linear %c, %w, %b : !nn.tensor<[S, 8], f32>, !nn.tensor<[4, 8], f32>, !nn.tensor<[4], f32>
  %n = nn.tanh %l : !nn.tensor<[S, 4], f32>
  nn.return %n, %n : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %w = nn.param_ref @wj : !nn.tensor<[5, 4], f32>
  %t = nn.tanh %h : !nn.tensor<[R, 4], f32>
  %z = nn.linear %t, %w : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed, Z: seq(B) computed] {
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %z, %zs = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rna blank 2 start 0
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s, %z, %zs : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
})"},
    // The prediction network written once, as training calls it
    // (embedding, forward LSTM, projection over [S, U]): greedy RNN-T and
    // RNA beam search drive its derived step graph; the reference runs it
    // on every whole prefix.
    {"transducer_sequence_predictor", R"(
nn.parameter @embed : !nn.tensor<[5, 3], f32>
nn.parameter @wi : !nn.tensor<[12, 3], f32>
nn.parameter @wh : !nn.tensor<[12, 3], f32>
nn.parameter @b : !nn.tensor<[12], f32>
nn.parameter @wp : !nn.tensor<[4, 3], f32>
nn.parameter @wj : !nn.tensor<[5, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S, U], i32>) -> !nn.tensor<[S, U, 4], f32>
    dims [S: batch, U: seq(S)] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 3], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[12, 3], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[12, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[12], f32>
  %wp = nn.param_ref @wp : !nn.tensor<[4, 3], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S, U], i32>, !nn.tensor<[5, 3], f32>
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[S, U, 3], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>
  %p = nn.linear %h, %wp : !nn.tensor<[S, U, 3], f32>, !nn.tensor<[4, 3], f32>
  nn.return %p : !nn.tensor<[S, U, 4], f32>
}
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %w = nn.param_ref @wj : !nn.tensor<[5, 4], f32>
  %t = nn.tanh %h : !nn.tensor<[R, 4], f32>
  %z = nn.linear %t, %w : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed, Z: seq(B) computed] {
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %z, %zs = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 2 start 0 beam 2
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s, %z, %zs : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
})"},
    // Transducer beam search over the same callees: RNN-T N-best (beam 3,
    // 2 labels per frame) and RNA best-only (beam 2).
    {"transducer_beam_search", R"(
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.parameter @wp : !nn.tensor<[4, 8], f32>
nn.parameter @bp : !nn.tensor<[4], f32>
nn.parameter @wj : !nn.tensor<[5, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>)
    -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %w = nn.param_ref @wp : !nn.tensor<[4, 8], f32>
  %b = nn.param_ref @bp : !nn.tensor<[4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[5, 4], f32>
  %c = nn.concat %x, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
  %l = nn.linear %c, %w, %b : !nn.tensor<[S, 8], f32>, !nn.tensor<[4, 8], f32>, !nn.tensor<[4], f32>
  %n = nn.tanh %l : !nn.tensor<[S, 4], f32>
  nn.return %n, %n : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %w = nn.param_ref @wj : !nn.tensor<[5, 4], f32>
  %t = nn.tanh %h : !nn.tensor<[R, 4], f32>
  %z = nn.linear %t, %w : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K),
          Y: seq(H) computed, Z: seq(B) computed] {
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 beam 3 max_symbols 2
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  %z, %zs = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 2 start 0 beam 2
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s, %z, %zs : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
})"},
    {"gather_states", R"(
nn.graph @g(%s: !nn.tensor<[B, U1, 3], f32>, %a: !nn.tensor<[B, T], i32>, %dg: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U1, 3], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  %g = nn.gather_states %s, %a blank 0 : !nn.tensor<[B, U1, 3], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, T, 3], f32>
  %ds = nn.gather_states_grad %dg, %a blank 0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, U1, 3], f32>
  nn.return %g, %ds : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U1, 3], f32>
})"},
    {"pack_unpack", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], i32>, %y: !nn.tensor<[B, T, 2], f32>)
    -> (!nn.tensor<[N, 3], i32>, !nn.tensor<[B, T, 2], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %p = nn.pack %x : !nn.tensor<[B, T, 3], i32> -> !nn.tensor<[N, 3], i32>
  %q = nn.pack %y : !nn.tensor<[B, T, 2], f32> -> !nn.tensor<[N, 2], f32>
  %u = nn.unpack %q : !nn.tensor<[N, 2], f32> -> !nn.tensor<[B, T, 2], f32>
  nn.return %p, %u : !nn.tensor<[N, 3], i32>, !nn.tensor<[B, T, 2], f32>
})"},
    {"broadcast_seq", R"(
nn.parameter @w : !nn.tensor<[4, 5], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %spk: !nn.tensor<[B, 2], f32>,
            %ids: !nn.tensor<[B], i32>, %y: !nn.tensor<[B, T], i32>)
    -> (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %s = nn.broadcast_seq %spk : !nn.tensor<[B, 2], f32> -> !nn.tensor<[B, T, 2], f32>
  %c = nn.concat %x, %s : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 2], f32>
  %m = nn.reduce mean %x over 1 : !nn.tensor<[B, T, 3], f32>
  %r = nn.broadcast_seq %m : !nn.tensor<[B, 3], f32> -> !nn.tensor<[B, T, 3], f32>
  %i = nn.broadcast_seq %ids : !nn.tensor<[B], i32> -> !nn.tensor<[B, T], i32>
  %w = nn.param_ref @w : !nn.tensor<[4, 5], f32>
  %logits = nn.linear %c, %w : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[4, 5], f32>
  %ce = nn.cross_entropy %logits, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return %c, %r, %i : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
})"},
    {"scalar_norm_call", R"(
nn.graph @inner(%x: !nn.tensor<[Bi, Ti, 3], f32>, %y: !nn.tensor<[Bi, Ti], i32>)
    -> !nn.tensor<[Bi, Ti, 3], f32> dims [Bi: batch, Ti: seq(Bi)] {
  %ce = nn.cross_entropy %x, %y from logits : !nn.tensor<[Bi, Ti, 3], f32>, !nn.tensor<[Bi, Ti], i32>
  nn.mark_loss %ce as "inner_ce" normalize per_frame : !nn.tensor<[Bi, Ti], f32>
  %t = nn.tanh %x : !nn.tensor<[Bi, Ti, 3], f32>
  nn.return %t : !nn.tensor<[Bi, Ti, 3], f32>
}
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>, %k: !nn.tensor<[], f32>)
    -> !nn.tensor<[B, T, 3], f32> dims [B: batch, T: seq(B)] {
  %h = nn.call @inner(%x, %y) : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>) -> !nn.tensor<[B, T, 3], f32>
  %e = nn.mse %h, %x : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>
  nn.mark_loss %e, %k as "mse" normalize custom : !nn.tensor<[B, T], f32>, !nn.tensor<[], f32>
  nn.return %h : !nn.tensor<[B, T, 3], f32>
})"},
    // The expected risk of an N-best list with both baselines, trained and
    // reported, and its gradient on a given incoming gradient.
    {"expected_risk", R"(
nn.graph @g(%nll: !nn.tensor<[B, K], f32>, %err: !nn.tensor<[B, K], f32>, %g: !nn.tensor<[B], f32>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>)
    dims [B: batch, K: seq(B)] {
  %r = nn.expected_risk %nll, %err baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.mark_loss %r as "mwer" normalize per_sequence : !nn.tensor<[B], f32>
  %n = nn.expected_risk %nll, %err baseline none : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.mark_loss %n as "risk" normalize sum as_error : !nn.tensor<[B], f32>
  %d = nn.expected_risk_grad %g, %nll, %err : !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.return %r, %n, %d : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>
})"},
};

} // namespace

const std::vector<OpCase> &nn::testing::opCases() { return kCases; }

std::string nn::testing::readExample(const std::string &name) {
  std::ifstream file(std::string(NN_SOURCE_DIR) + "/examples/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}
