//===- GradientTest.cpp - nn-autodiff against finite differences ----------===//
//
// For graphs around each op family with a VJP:
//   * the reference evaluator (float64, unittests/reference/) runs the
//     differentiated graph, and its gradients agree with central finite
//     differences of the objective it computes on the original graph
//     (rel 1e-6): the VJP rules, checked without the lowering;
//   * the compiled gradients (float32) agree with that float64 value
//     within rel 1e-3, packed and padded, and packed with padded within
//     rel 1e-5;
//   * NaN, +inf or -inf in every padded input frame leaves every gradient
//     finite and unchanged.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include "lowering/Registration.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <array>
#include <functional>
#include <limits>
#include <random>

using namespace nn;
using namespace nn::testing;

namespace {

struct GradCase {
  const char *name;
  const char *source;
  /// Compiled (and evaluated) in training mode: dropout drops units.
  bool training = false;
};
// GoogleTest looks this name up. NOLINTNEXTLINE(readability-identifier-naming)
void PrintTo(const GradCase &c, std::ostream *os) { *os << c.name; }

const GradCase kCases[] = {
    // linear with bias, tanh, CE from logits with label smoothing.
    {"linear_tanh_ce", R"(
nn.parameter @w1 : !nn.tensor<[5, 4], f32>
nn.parameter @b1 : !nn.tensor<[5], f32>
nn.parameter @w2 : !nn.tensor<[3, 5], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w1 = nn.param_ref @w1 : !nn.tensor<[5, 4], f32>
  %b1 = nn.param_ref @b1 : !nn.tensor<[5], f32>
  %w2 = nn.param_ref @w2 : !nn.tensor<[3, 5], f32>
  %h = nn.linear %x, %w1, %b1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>, !nn.tensor<[5], f32>
  %a = nn.tanh %h : !nn.tensor<[B, T, 5], f32>
  %l = nn.linear %a, %w2 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[3, 5], f32>
  %ce = nn.cross_entropy %l, %y from logits label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})"},
    // Weighted losses: CE per frame over the weighted frame count, MSE
    // per sequence, the weights in (0, 1) from an input (they get no
    // gradient, so no parameter may reach them). The linear and CE fuse,
    // and their backward stays apart: the fused sweep seeds frames alike.
    {"weighted_losses", R"(
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.parameter @v : !nn.tensor<[4, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
            %c: !nn.tensor<[B, T, 1], f32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %v = nn.param_ref @v : !nn.tensor<[4, 4], f32>
  %h = nn.linear %x, %v : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 4], f32>
  %a = nn.tanh %h : !nn.tensor<[B, T, 4], f32>
  %l = nn.linear %a, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  %s = nn.sigmoid %c : !nn.tensor<[B, T, 1], f32>
  %e = nn.mse %s, %c : !nn.tensor<[B, T, 1], f32>, !nn.tensor<[B, T, 1], f32>
  nn.mark_loss %ce weights %e as "ce" normalize per_frame : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f32>
  %m = nn.mse %a, %x : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  nn.mark_loss %m weights %e as "mse" normalize per_sequence scale 5.000000e-01 : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f32>
  nn.return
})"},
    // Frame-wise training on an RNN-T path [B, A]: the encoder frame of
    // each position by its blanks before, the prediction state by its
    // labels before, CE on the path's classes. The path's lengths are its
    // own (a sequence with positions but no frames gathers nothing).
    {"rnnt_path_gathers", R"(
nn.parameter @we : !nn.tensor<[4, 3], f32>
nn.parameter @wp : !nn.tensor<[4, 3], f32>
nn.parameter @wo : !nn.tensor<[5, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %s: !nn.tensor<[B, U1, 3], f32>,
            %path: !nn.tensor<[B, A], i32>)
    dims [B: batch, T: seq(B), U1: seq(B), A: seq(B)] {
  %we = nn.param_ref @we : !nn.tensor<[4, 3], f32>
  %wp = nn.param_ref @wp : !nn.tensor<[4, 3], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[5, 4], f32>
  %enc = nn.linear %x, %we : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %pred = nn.linear %s, %wp : !nn.tensor<[B, U1, 3], f32>, !nn.tensor<[4, 3], f32>
  %fe = nn.gather_states %enc, %path blank 0 by_blanks : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, A], i32> -> !nn.tensor<[B, A, 4], f32>
  %fp = nn.gather_states %pred, %path blank 0 : !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, A], i32> -> !nn.tensor<[B, A, 4], f32>
  %j = nn.add %fe, %fp : !nn.tensor<[B, A, 4], f32>
  %t = nn.tanh %j : !nn.tensor<[B, A, 4], f32>
  %o = nn.linear %t, %wo : !nn.tensor<[B, A, 4], f32>, !nn.tensor<[5, 4], f32>
  %ce = nn.cross_entropy %o, %path from logits : !nn.tensor<[B, A, 5], f32>, !nn.tensor<[B, A], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, A], f32>
  nn.return
})"},
    // An L2 regularization loss over two parameters beside CE: its
    // gradient 2 s w adds to the CE gradient of w, and b gets it alone.
    {"param_norm_l2", R"(
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.parameter @b : !nn.tensor<[3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %b = nn.param_ref @b : !nn.tensor<[3], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %n = nn.param_norm %w, %b : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  nn.mark_loss %n as "l2" normalize sum scale 3.000000e-01 : !nn.tensor<[], f32>
  nn.return
})"},
    // log_softmax then CE from log-probabilities; a summed loss at half
    // weight, an error-only loss that must not train, a parameter used
    // twice (its gradients add).
    {"log_probs_two_losses", R"(
nn.parameter @w : !nn.tensor<[4, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[4, 4], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 4], f32>
  %s = nn.sigmoid %h : !nn.tensor<[B, T, 4], f32>
  %h2 = nn.linear %s, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 4], f32>
  %lp = nn.log_softmax %h2 : !nn.tensor<[B, T, 4], f32>
  %ce = nn.cross_entropy %lp, %y from log_probs : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize sum scale 5.000000e-01 : !nn.tensor<[B, T], f32>
  %ce2 = nn.cross_entropy %h, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce2 as "err" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  nn.return
})"},
    // Elementwise products and sums, relu, gelu, silu, glu, dropout
    // (evaluation),
    // softmax, and MSE normalized per sequence, unnormalized.
    {"elementwise_softmax_mse", R"(
nn.parameter @w : !nn.tensor<[3, 3], f32>
nn.parameter @v : !nn.tensor<[3, 3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %r: !nn.tensor<[B, T, 3], f32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 3], f32>
  %v = nn.param_ref @v : !nn.tensor<[3, 3], f32>
  %a = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 3], f32>
  %b = nn.linear %x, %v : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 3], f32>
  %m = nn.mul %a, %b : !nn.tensor<[B, T, 3], f32>
  %r1 = nn.relu %m : !nn.tensor<[B, T, 3], f32>
  %g1 = nn.gelu %b : !nn.tensor<[B, T, 3], f32>
  %w1 = nn.silu %g1 : !nn.tensor<[B, T, 3], f32>
  %c1 = nn.concat %w1, %a : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>
  %u1 = nn.glu %c1 : !nn.tensor<[B, T, 6], f32>
  %h1 = nn.scale %u1 by 5.000000e-01 : !nn.tensor<[B, T, 3], f32>
  %s = nn.add %r1, %h1 : !nn.tensor<[B, T, 3], f32>
  %d = nn.dropout %s rate 1.000000e-01 : !nn.tensor<[B, T, 3], f32>
  %p = nn.softmax %d : !nn.tensor<[B, T, 3], f32>
  %e = nn.mse %p, %r : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>
  nn.mark_loss %e as "mse" normalize per_sequence {use_normalized_loss = false} : !nn.tensor<[B, T], f32>
  nn.return
})"},
    // layer_norm, concat (its VJP slices), embedding (its VJP scatters).
    {"layer_norm_concat_embedding", R"(
nn.parameter @table : !nn.tensor<[6, 2], f32>
nn.parameter @gain : !nn.tensor<[5], f32>
nn.parameter @shift : !nn.tensor<[5], f32>
nn.parameter @w : !nn.tensor<[3, 5], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %ids: !nn.tensor<[B, T], i32>,
            %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %table = nn.param_ref @table : !nn.tensor<[6, 2], f32>
  %gain = nn.param_ref @gain : !nn.tensor<[5], f32>
  %shift = nn.param_ref @shift : !nn.tensor<[5], f32>
  %w = nn.param_ref @w : !nn.tensor<[3, 5], f32>
  %e = nn.embedding %ids, %table : !nn.tensor<[B, T], i32>, !nn.tensor<[6, 2], f32>
  %c = nn.concat %x, %e : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 2], f32>
  %n = nn.layer_norm %c, %gain, %shift : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[5], f32>, !nn.tensor<[5], f32>
  %l = nn.linear %n, %w : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[3, 5], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})"},
    // Masked reductions over time (sum, mean, max) and broadcast_seq
    // (whose VJP is the masked sum over its frames). The maximum reaches
    // the loss through frames only: over an empty sequence it is -inf.
    {"reduce_broadcast", R"(
nn.parameter @w : !nn.tensor<[3, 3], f32>
nn.parameter @u : !nn.tensor<[3, 9], f32>
nn.parameter @v : !nn.tensor<[2, 6], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>,
            %z: !nn.tensor<[B], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 3], f32>
  %uw = nn.param_ref @u : !nn.tensor<[3, 9], f32>
  %v = nn.param_ref @v : !nn.tensor<[2, 6], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 3], f32>
  %m = nn.reduce mean %h over 1 : !nn.tensor<[B, T, 3], f32>
  %s = nn.reduce sum %h over 1 : !nn.tensor<[B, T, 3], f32>
  %k = nn.reduce max %h over 1 : !nn.tensor<[B, T, 3], f32>
  %mb = nn.broadcast_seq %m : !nn.tensor<[B, 3], f32> -> !nn.tensor<[B, T, 3], f32>
  %kb = nn.broadcast_seq %k : !nn.tensor<[B, 3], f32> -> !nn.tensor<[B, T, 3], f32>
  %c = nn.concat %h, %mb, %kb : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>
  %l = nn.linear %c, %uw : !nn.tensor<[B, T, 9], f32>, !nn.tensor<[3, 9], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "frames" normalize per_frame : !nn.tensor<[B, T], f32>
  %sm = nn.concat %s, %m : !nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>
  %q = nn.linear %sm, %v : !nn.tensor<[B, 6], f32>, !nn.tensor<[2, 6], f32>
  %ce2 = nn.cross_entropy %q, %z from logits : !nn.tensor<[B, 2], f32>, !nn.tensor<[B], i32>
  nn.mark_loss %ce2 as "seqs" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
})"},
    // Pooling over time: average and maximum, stride 1 and a stride-2
    // window of 3 (overlapping windows, a derived dim).
    {"pool", R"(
nn.parameter @w : !nn.tensor<[3, 3], f32>
nn.parameter @v : !nn.tensor<[3, 6], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T2], i32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 3], f32>
  %v = nn.param_ref @v : !nn.tensor<[3, 6], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 3], f32>
  %a = nn.pool avg %h window 2 stride 1 : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
  %m = nn.pool max %a window 3 stride 2 : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T2, 3], f32>
  %p = nn.pool avg %h window 3 stride 2 : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T2, 3], f32>
  %c = nn.concat %m, %p : !nn.tensor<[B, T2, 3], f32>, !nn.tensor<[B, T2, 3], f32>
  %l = nn.linear %c, %v : !nn.tensor<[B, T2, 6], f32>, !nn.tensor<[3, 6], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T2, 3], f32>, !nn.tensor<[B, T2], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T2], f32>
  nn.return
})"},
    // LSTMs in all three directions, stacked, so each one's input
    // gradient reaches the parameters before it; the bidirectional output
    // also feeds the loss directly.
    {"lstm", R"(
nn.parameter @w0 : !nn.tensor<[4, 3], f32>
nn.parameter @wi : !nn.tensor<[2, 8, 4], f32>
nn.parameter @wh : !nn.tensor<[2, 8, 2], f32>
nn.parameter @b : !nn.tensor<[2, 8], f32>
nn.parameter @wi2 : !nn.tensor<[8, 4], f32>
nn.parameter @wh2 : !nn.tensor<[8, 2], f32>
nn.parameter @b2 : !nn.tensor<[8], f32>
nn.parameter @wi3 : !nn.tensor<[8, 2], f32>
nn.parameter @wh3 : !nn.tensor<[8, 2], f32>
nn.parameter @b3 : !nn.tensor<[8], f32>
nn.parameter @wo : !nn.tensor<[3, 6], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w0 = nn.param_ref @w0 : !nn.tensor<[4, 3], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[2, 8, 4], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[2, 8, 2], f32>
  %b = nn.param_ref @b : !nn.tensor<[2, 8], f32>
  %wi2 = nn.param_ref @wi2 : !nn.tensor<[8, 4], f32>
  %wh2 = nn.param_ref @wh2 : !nn.tensor<[8, 2], f32>
  %b2 = nn.param_ref @b2 : !nn.tensor<[8], f32>
  %wi3 = nn.param_ref @wi3 : !nn.tensor<[8, 2], f32>
  %wh3 = nn.param_ref @wh3 : !nn.tensor<[8, 2], f32>
  %b3 = nn.param_ref @b3 : !nn.tensor<[8], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[3, 6], f32>
  %h0 = nn.linear %x, %w0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %h1 = nn.lstm bidirectional %h0, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[2, 8, 4], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>
  %h2 = nn.lstm backward %h1, %wi2, %wh2, %b2 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[8, 4], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
  %h3 = nn.lstm forward %h2, %wi3, %wh3, %b3 : !nn.tensor<[B, T, 2], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
  %c = nn.concat %h3, %h1 : !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 4], f32>
  %l = nn.linear %c, %wo : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[3, 6], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})"},
    // conv1d: stride 1 with an odd kernel, stride 2 with an even one (a
    // derived dim), with and without bias, depthwise (groups = channels)
    // and grouped (2 groups of 2 in, 4 out, gated by a glu); the first
    // conv's input gradient reaches the linear before it.
    {"conv1d", R"(
nn.parameter @w0 : !nn.tensor<[3, 2], f32>
nn.parameter @k1 : !nn.tensor<[4, 3, 3], f32>
nn.parameter @c1 : !nn.tensor<[4], f32>
nn.parameter @k2 : !nn.tensor<[3, 4, 4], f32>
nn.parameter @k3 : !nn.tensor<[4, 3, 1], f32>
nn.parameter @c3 : !nn.tensor<[4], f32>
nn.parameter @k4 : !nn.tensor<[8, 2, 2], f32>
nn.parameter @wo : !nn.tensor<[3, 3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 2], f32>, %y: !nn.tensor<[B, T2], i32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %w0 = nn.param_ref @w0 : !nn.tensor<[3, 2], f32>
  %k1 = nn.param_ref @k1 : !nn.tensor<[4, 3, 3], f32>
  %c1 = nn.param_ref @c1 : !nn.tensor<[4], f32>
  %k2 = nn.param_ref @k2 : !nn.tensor<[3, 4, 4], f32>
  %k3 = nn.param_ref @k3 : !nn.tensor<[4, 3, 1], f32>
  %c3 = nn.param_ref @c3 : !nn.tensor<[4], f32>
  %k4 = nn.param_ref @k4 : !nn.tensor<[8, 2, 2], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[3, 3], f32>
  %h = nn.linear %x, %w0 : !nn.tensor<[B, T, 2], f32>, !nn.tensor<[3, 2], f32>
  %c = nn.conv1d %h, %k1, %c1 stride 1 : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3, 3], f32>, !nn.tensor<[4], f32>) -> !nn.tensor<[B, T, 4], f32>
  %a = nn.tanh %c : !nn.tensor<[B, T, 4], f32>
  %dw = nn.conv1d %a, %k3, %c3 stride 1 groups 4 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 3, 1], f32>, !nn.tensor<[4], f32>) -> !nn.tensor<[B, T, 4], f32>
  %g = nn.conv1d %dw, %k4 stride 1 groups 2 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[8, 2, 2], f32>) -> !nn.tensor<[B, T, 8], f32>
  %gs = nn.glu %g : !nn.tensor<[B, T, 8], f32>
  %d = nn.conv1d %gs, %k2 stride 2 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4, 4], f32>) -> !nn.tensor<[B, T2, 3], f32>
  %l = nn.linear %d, %wo : !nn.tensor<[B, T2, 3], f32>, !nn.tensor<[3, 3], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T2, 3], f32>, !nn.tensor<[B, T2], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T2], f32>
  nn.return
})"},
    // Self-attention over projections of one input (their gradients add
    // into it; queries and keys with rotary position embeddings), causal
    // with a left context, and cross-attention from a
    // second sequence dim; CE over both.
    {"attention", R"(
nn.parameter @wq : !nn.tensor<[4, 3], f32>
nn.parameter @wk : !nn.tensor<[4, 3], f32>
nn.parameter @wv : !nn.tensor<[4, 3], f32>
nn.parameter @wu : !nn.tensor<[4, 2], f32>
nn.parameter @wo : !nn.tensor<[3, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>,
            %z: !nn.tensor<[B, U, 2], f32>, %l: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %wq = nn.param_ref @wq : !nn.tensor<[4, 3], f32>
  %wk = nn.param_ref @wk : !nn.tensor<[4, 3], f32>
  %wv = nn.param_ref @wv : !nn.tensor<[4, 3], f32>
  %wu = nn.param_ref @wu : !nn.tensor<[4, 2], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[3, 4], f32>
  %q = nn.linear %x, %wq : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %k = nn.linear %x, %wk : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %v = nn.linear %x, %wv : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %qr = nn.rotary %q heads 2 base 1.000000e+01 : !nn.tensor<[B, T, 4], f32>
  %kr = nn.rotary %k heads 2 base 1.000000e+01 : !nn.tensor<[B, T, 4], f32>
  %a = nn.attention %qr, %kr, %v heads 2 causal left_context 2 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  %o = nn.linear %a, %wo : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %o, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %u = nn.linear %z, %wu : !nn.tensor<[B, U, 2], f32>, !nn.tensor<[4, 2], f32>
  %c = nn.attention %u, %a, %v heads 1 : !nn.tensor<[B, U, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  %co = nn.linear %c, %wo : !nn.tensor<[B, U, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce2 = nn.cross_entropy %co, %l from logits : !nn.tensor<[B, U, 3], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ce2 as "cross" normalize per_frame : !nn.tensor<[B, U], f32>
  nn.return
})"},
    // Conformer-style relative positions: the content and position
    // queries share a weight with their own biases (Transformer-XL's u
    // and v), the table is projected sinusoids of distances -3 ... 3
    // (longer ones clip), with and without a causal mask; CE over both.
    {"attention_relative", R"(
nn.parameter @wq : !nn.tensor<[4, 3], f32>
nn.parameter @bu : !nn.tensor<[4], f32>
nn.parameter @bv : !nn.tensor<[4], f32>
nn.parameter @wk : !nn.tensor<[4, 3], f32>
nn.parameter @wpos : !nn.tensor<[4, 6], f32>
nn.parameter @wo : !nn.tensor<[3, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %wq = nn.param_ref @wq : !nn.tensor<[4, 3], f32>
  %bu = nn.param_ref @bu : !nn.tensor<[4], f32>
  %bv = nn.param_ref @bv : !nn.tensor<[4], f32>
  %wk = nn.param_ref @wk : !nn.tensor<[4, 3], f32>
  %wpos = nn.param_ref @wpos : !nn.tensor<[4, 6], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[3, 4], f32>
  %q = nn.linear %x, %wq, %bu : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>, !nn.tensor<[4], f32>
  %r = nn.linear %x, %wq, %bv : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>, !nn.tensor<[4], f32>
  %k = nn.linear %x, %wk : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %p = nn.relative_positions %wpos : !nn.tensor<[4, 6], f32> -> !nn.tensor<[7, 4], f32>
  %a = nn.attention %q, %k, %k relative %r, %p heads 2 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[7, 4], f32>
  %c = nn.attention %a, %k, %q relative %r, %p heads 1 causal : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[7, 4], f32>
  %o = nn.linear %c, %wo : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %o, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})"},
    // CTC from logits and from log-probabilities (zero_infinity: the
    // shape runs include sequences too short for their labels), through a
    // shared linear so the two gradients add.
    {"ctc", R"(
nn.parameter @w : !nn.tensor<[4, 3], f32>
nn.parameter @v : !nn.tensor<[4, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[4, 3], f32>
  %v = nn.param_ref @v : !nn.tensor<[4, 4], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %ctc = nn.ctc_loss %h, %y from logits blank 0 zero_infinity : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  %h2 = nn.linear %h, %v : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 4], f32>
  %lp = nn.log_softmax %h2 : !nn.tensor<[B, T, 4], f32>
  %ctc2 = nn.ctc_loss %lp, %y from log_probs blank 3 zero_infinity : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc2 as "ctc2" normalize sum scale 5.000000e-01 : !nn.tensor<[B], f32>
  nn.return
})"},
    // A transducer: prediction network (start symbol, embedding, LSTM
    // over U + 1) and encoder meet in the packed joint; RNN-T and RNA
    // (zero_infinity: sequences without frames have no RNN-T path).
    {"transducer", R"(
nn.parameter @emb : !nn.tensor<[4, 3], f32>
nn.parameter @wi : !nn.tensor<[12, 3], f32>
nn.parameter @wh : !nn.tensor<[12, 3], f32>
nn.parameter @bl : !nn.tensor<[12], f32>
nn.parameter @we : !nn.tensor<[3, 3], f32>
nn.parameter @wo : !nn.tensor<[4, 3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %emb = nn.param_ref @emb : !nn.tensor<[4, 3], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[12, 3], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[12, 3], f32>
  %bl = nn.param_ref @bl : !nn.tensor<[12], f32>
  %we = nn.param_ref @we : !nn.tensor<[3, 3], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[4, 3], f32>
  %s = nn.prepend_start %y start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %e = nn.embedding %s, %emb : !nn.tensor<[B, U1], i32>, !nn.tensor<[4, 3], f32>
  %p = nn.lstm forward %e, %wi, %wh, %bl : !nn.tensor<[B, U1, 3], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>
  %enc = nn.linear %x, %we : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 3], f32>
  %j = nn.transducer_join %enc, %p : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U1, 3], f32> -> !nn.tensor<[J, 3], f32>
  %a = nn.tanh %j : !nn.tensor<[J, 3], f32>
  %z = nn.linear %a, %wo : !nn.tensor<[J, 3], f32>, !nn.tensor<[4, 3], f32>
  %l = nn.transducer_loss %z, %y from logits topology rnnt blank 0 zero_infinity : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %l as "rnnt" normalize per_sequence : !nn.tensor<[B], f32>
  %r = nn.transducer_loss %z, %y from logits topology rna blank 0 zero_infinity : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %r as "rna" normalize sum scale 5.000000e-01 : !nn.tensor<[B], f32>
  nn.return
})"},
    // Frame-wise training on an RNA alignment: each frame's joint input is
    // the encoder frame plus the prediction state it is in.
    {"rna_frame_wise", R"(
nn.parameter @emb : !nn.tensor<[4, 3], f32>
nn.parameter @we : !nn.tensor<[3, 3], f32>
nn.parameter @wo : !nn.tensor<[4, 3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>, %a: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  %emb = nn.param_ref @emb : !nn.tensor<[4, 3], f32>
  %we = nn.param_ref @we : !nn.tensor<[3, 3], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[4, 3], f32>
  %s = nn.prepend_start %y start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %p = nn.embedding %s, %emb : !nn.tensor<[B, U1], i32>, !nn.tensor<[4, 3], f32>
  %q = nn.tanh %p : !nn.tensor<[B, U1, 3], f32>
  %g = nn.gather_states %q, %a blank 0 : !nn.tensor<[B, U1, 3], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, T, 3], f32>
  %enc = nn.linear %x, %we : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 3], f32>
  %j = nn.add %enc, %g : !nn.tensor<[B, T, 3], f32>
  %h = nn.tanh %j : !nn.tensor<[B, T, 3], f32>
  %z = nn.linear %h, %wo : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %ce = nn.cross_entropy %z, %a from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})"},
    // Calls: @model has a loss of its own, seeded inside its companion;
    // @proj is called on the data input (no input gradient wanted) and on
    // a computed value (its companion returns the input gradient), and
    // its parameter's gradients from both calls add.
    // N-best lists as a batch, K given as an input dim: a sequence's
    // frames repeated per hypothesis (VJP: the sum over them), summed back
    // (VJP: repeated), per-hypothesis values unflattened to [B, K] (VJP:
    // flattened) and flattened again (VJP: unflattened).
    {"beam_layout", R"(
nn.parameter @w : !nn.tensor<[3, 3], f32>
nn.parameter @v : !nn.tensor<[3, 3], f32>
nn.parameter @u : !nn.tensor<[2, 3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>,
            %z: !nn.tensor<[B, K], i32>)
    dims [B: batch, T: seq(B), K: seq(B), H: batch = flatten(B, K), TH: seq(H) = T] {
  %w = nn.param_ref @w : !nn.tensor<[3, 3], f32>
  %v = nn.param_ref @v : !nn.tensor<[3, 3], f32>
  %u = nn.param_ref @u : !nn.tensor<[2, 3], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 3], f32>
  %hh = nn.repeat_beam %h : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[H, TH, 3], f32>
  %a = nn.tanh %hh : !nn.tensor<[H, TH, 3], f32>
  %s = nn.sum_beam %a : !nn.tensor<[H, TH, 3], f32> -> !nn.tensor<[B, T, 3], f32>
  %l = nn.linear %s, %v : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 3], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "frames" normalize per_frame : !nn.tensor<[B, T], f32>
  %m = nn.reduce sum %a over 1 : !nn.tensor<[H, TH, 3], f32>
  %mu = nn.unflatten_beam %m : !nn.tensor<[H, 3], f32> -> !nn.tensor<[B, K, 3], f32>
  %q = nn.linear %mu, %u : !nn.tensor<[B, K, 3], f32>, !nn.tensor<[2, 3], f32>
  %ce2 = nn.cross_entropy %q, %z from logits : !nn.tensor<[B, K, 2], f32>, !nn.tensor<[B, K], i32>
  nn.mark_loss %ce2 as "hyps" normalize per_frame : !nn.tensor<[B, K], f32>
  %mf = nn.flatten_beam %mu : !nn.tensor<[B, K, 3], f32> -> !nn.tensor<[H, 3], f32>
  %zf = nn.flatten_beam %z : !nn.tensor<[B, K], i32> -> !nn.tensor<[H], i32>
  %q2 = nn.linear %mf, %u : !nn.tensor<[H, 3], f32>, !nn.tensor<[2, 3], f32>
  %ce3 = nn.cross_entropy %q2, %zf from logits : !nn.tensor<[H, 2], f32>, !nn.tensor<[H], i32>
  nn.mark_loss %ce3 as "flat" normalize per_sequence : !nn.tensor<[H], f32>
  nn.return
})"},
    // Minimum expected risk over a search's N-best list: every label
    // sequence the frames can spell (a beam of 128 keeps all of them for
    // at most 5 frames and 2 labels, so the list does not change under the
    // finite differences' perturbations), each rescored by ctc_loss over
    // the flattened batch, its errors against the references; the
    // gradient reaches the linear layer through expected_risk, ctc_loss
    // and repeat_beam (sum_beam), never through the search.
    {"mwer_nbest", R"(
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed,
          H: batch = flatten(B, K), Z: seq(H) computed, TH: seq(H) = T,
          UH: seq(H) = U] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %nb, %s = nn.ctc_beam_search %l from logits blank 0 beam 128 merge sum : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, K, Z], i32>, !nn.tensor<[B, K], f32>
  %zh = nn.flatten_beam %nb : !nn.tensor<[B, K, Z], i32> -> !nn.tensor<[H, Z], i32>
  %lh = nn.repeat_beam %l : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[H, TH, 3], f32>
  %nll = nn.ctc_loss %lh, %zh from logits blank 0 zero_infinity : !nn.tensor<[H, TH, 3], f32>, !nn.tensor<[H, Z], i32>
  %yh = nn.repeat_beam %y : !nn.tensor<[B, U], i32> -> !nn.tensor<[H, UH], i32>
  %e, %n, %c = nn.edit_distance %zh, %yh : !nn.tensor<[H, Z], i32>, !nn.tensor<[H, UH], i32>
  %nk = nn.unflatten_beam %nll : !nn.tensor<[H], f32> -> !nn.tensor<[B, K], f32>
  %ek = nn.unflatten_beam %e : !nn.tensor<[H], f32> -> !nn.tensor<[B, K], f32>
  %r = nn.expected_risk %nk, %ek baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.mark_loss %r as "mwer" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
})"},
    {"call", R"(
nn.parameter @w : !nn.tensor<[3, 3], f32>
nn.parameter @u : !nn.tensor<[3, 3], f32>
nn.parameter @v : !nn.tensor<[3, 3], f32>
nn.graph @proj(%x: !nn.tensor<[Bp, Tp, 3], f32>) -> !nn.tensor<[Bp, Tp, 3], f32>
    dims [Bp: batch, Tp: seq(Bp)] {
  %u = nn.param_ref @u : !nn.tensor<[3, 3], f32>
  %h = nn.linear %x, %u : !nn.tensor<[Bp, Tp, 3], f32>, !nn.tensor<[3, 3], f32>
  %s = nn.sigmoid %h : !nn.tensor<[Bp, Tp, 3], f32>
  nn.return %s : !nn.tensor<[Bp, Tp, 3], f32>
}
nn.graph @model(%x: !nn.tensor<[Bm, Tm, 3], f32>, %y: !nn.tensor<[Bm, Tm], i32>)
    -> !nn.tensor<[Bm, Tm, 3], f32> dims [Bm: batch, Tm: seq(Bm)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 3], f32>
  %h = nn.linear %x, %w : !nn.tensor<[Bm, Tm, 3], f32>, !nn.tensor<[3, 3], f32>
  %t = nn.tanh %h : !nn.tensor<[Bm, Tm, 3], f32>
  %ce = nn.cross_entropy %t, %y from logits : !nn.tensor<[Bm, Tm, 3], f32>, !nn.tensor<[Bm, Tm], i32>
  nn.mark_loss %ce as "inner" normalize per_frame scale 5.000000e-01 : !nn.tensor<[Bm, Tm], f32>
  nn.return %t : !nn.tensor<[Bm, Tm, 3], f32>
}
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %v = nn.param_ref @v : !nn.tensor<[3, 3], f32>
  %p = nn.call @proj(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
  %h = nn.call @model(%p, %y) : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>) -> !nn.tensor<[B, T, 3], f32>
  %o = nn.linear %h, %v : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 3], f32>
  %p2 = nn.call @proj(%o) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
  %ce = nn.cross_entropy %p2, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "outer" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})"},
    // Training mode: dropout before the packed tail and inside it, each
    // with its own key; the seed is an input. Packed and padded runs must
    // drop the same units, and the backward must reuse the mask.
    {"dropout_training", R"(
nn.parameter @w : !nn.tensor<[5, 3], f32>
nn.parameter @v : !nn.tensor<[3, 5], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[5, 3], f32>
  %v = nn.param_ref @v : !nn.tensor<[3, 5], f32>
  %d0 = nn.dropout %x rate 2.000000e-01 : !nn.tensor<[B, T, 3], f32>
  %r = nn.reduce mean %d0 over 1 : !nn.tensor<[B, T, 3], f32>
  %rb = nn.broadcast_seq %r : !nn.tensor<[B, 3], f32> -> !nn.tensor<[B, T, 3], f32>
  %h = nn.linear %rb, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>
  %a = nn.tanh %h : !nn.tensor<[B, T, 5], f32>
  %d = nn.dropout %a rate 5.000000e-01 : !nn.tensor<[B, T, 5], f32>
  %l = nn.linear %d, %v : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[3, 5], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})",
     /*training=*/true},
    // Training mode: dropout of the attention weights (half of them), with
    // relative positions and a causal mask; packed and padded runs must
    // drop the same weights, and the gradient must redraw them.
    {"attention_dropout_training", R"(
nn.parameter @wq : !nn.tensor<[4, 3], f32>
nn.parameter @wpos : !nn.tensor<[4, 2], f32>
nn.parameter @wo : !nn.tensor<[3, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %wq = nn.param_ref @wq : !nn.tensor<[4, 3], f32>
  %wpos = nn.param_ref @wpos : !nn.tensor<[4, 2], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[3, 4], f32>
  %q = nn.linear %x, %wq : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %p = nn.relative_positions %wpos : !nn.tensor<[4, 2], f32> -> !nn.tensor<[5, 4], f32>
  %a = nn.attention %q, %q, %q relative %q, %p heads 2 dropout 5.000000e-01 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  %c = nn.attention %a, %a, %q heads 1 causal dropout 3.000000e-01 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  %o = nn.linear %c, %wo : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %o, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})",
     /*training=*/true},
    // Training mode: SpecAugment between two layers (its VJP masks the
    // gradient of the first), bands wide enough for the short test
    // sequences to be masked often.
    {"spec_augment_training", R"(
nn.parameter @w : !nn.tensor<[5, 3], f32>
nn.parameter @v : !nn.tensor<[3, 5], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[5, 3], f32>
  %v = nn.param_ref @v : !nn.tensor<[3, 5], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>
  %m = nn.spec_augment %h freq_masks 2 freq_width 2 time_masks 1 time_width 2 : !nn.tensor<[B, T, 5], f32>
  %a = nn.tanh %m : !nn.tensor<[B, T, 5], f32>
  %l = nn.linear %a, %v : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[3, 5], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})",
     /*training=*/true},
    // Minimum expected risk over an N-best list, mixed with cross
    // entropy: each hypothesis here is one position, whose cross entropy
    // is its nll. The same cross entropy is trained directly at half
    // weight, so packed runs pack it for that loss and both risks (mean
    // baseline; none, summed at a quarter weight) read it unpacked.
    {"expected_risk", R"(
nn.parameter @w : !nn.tensor<[3, 3], f32>
nn.parameter @b : !nn.tensor<[3], f32>
nn.graph @g(%x: !nn.tensor<[B, K, 3], f32>, %y: !nn.tensor<[B, K], i32>, %err: !nn.tensor<[B, K], f32>)
    dims [B: batch, K: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[3], f32>
  %h = nn.linear %x, %w, %b : !nn.tensor<[B, K, 3], f32>, !nn.tensor<[3, 3], f32>, !nn.tensor<[3], f32>
  %a = nn.tanh %h : !nn.tensor<[B, K, 3], f32>
  %nll = nn.cross_entropy %a, %y from logits : !nn.tensor<[B, K, 3], f32>, !nn.tensor<[B, K], i32>
  nn.mark_loss %nll as "ce" normalize per_frame scale 5.000000e-01 : !nn.tensor<[B, K], f32>
  %r = nn.expected_risk %nll, %err baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.mark_loss %r as "mwer" normalize per_sequence : !nn.tensor<[B], f32>
  %n = nn.expected_risk %nll, %err baseline none : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.mark_loss %n as "risk" normalize sum scale 2.500000e-01 : !nn.tensor<[B], f32>
  nn.return
})"},
};

/// `source` differentiated (ExecutionUtil's transform), printed: the
/// reference evaluates it like any graph.
std::string differentiate(const std::string &source, bool pack) {
  return transform(source, /*training=*/false, pack, /*grads=*/true);
}

/// `saveForward` = false: LSTM and attention backwards recompute what
/// their forwards would keep (nn-save-lstm-tape and
/// nn-save-attention-stats off).
Executable compileWithGrads(const std::string &source, bool pack,
                            bool training = false, bool saveForward = true) {
  CompileOptions options;
  options.optimize.pack = pack;
  options.grads = true;
  options.training = training;
  options.optimize.saveLstmTape = saveForward;
  options.optimize.saveAttentionStats = saveForward;
  return compileOrDie(source, options);
}

/// The training objective by the reference: the sum over trained losses
/// of scale x (sum / normalization, or sum).
double objective(const std::string &source, const Manifest &manifest,
                 const RunInputs &inputs) {
  reference::Result result;
  absl::Status status = reference::evaluate(source, "g", inputs, result);
  EXPECT_TRUE(status.ok()) << status.message();
  double total = 0;
  for (const LossInfo &loss : manifest.losses) {
    if (loss.asError)
      continue;
    const reference::Loss &value = result.losses.at(loss.name);
    double term =
        loss.useNormalizedLoss
            ? (value.normalization == 0 ? 0.0 : value.sum / value.normalization)
            : value.sum;
    total += loss.scale * term;
  }
  return total;
}

/// A copy of `inputs` with NaN in every padded frame of its input "x"
/// ([B, T, features], sequence b `lengths[b]` frames long): whatever
/// padding holds must not reach a loss or a gradient.
RunInputs withNanPadding(const RunInputs &inputs,
                         const std::vector<int32_t> &lengths, int64_t time,
                         int64_t features) {
  RunInputs nanInputs = inputs;
  Tensor &x = nanInputs.inputs["x"];
  for (int64_t i = 0; i < x.numElements(); ++i)
    if ((i / features) % time >= lengths[i / (features * time)])
      x.data<float>()[i] = std::numeric_limits<float>::quiet_NaN();
  return nanInputs;
}

/// The gradients a run returned, by parameter name.
std::map<std::string, Tensor> gradientsOf(const RunResult &result) {
  std::map<std::string, Tensor> gradients;
  for (const std::string &name : result.gradientNames())
    gradients[name] = *result.gradient(name);
  return gradients;
}

class GradientTest : public ::testing::TestWithParam<GradCase> {};

TEST_P(GradientTest, MatchesFiniteDifferencesPackedAndPadded) {
  const GradCase &c = GetParam();
  // The module the reference evaluates: in training mode, with the seed
  // input and the keys the compiler gives each dropout.
  std::string source =
      c.training ? transform(c.source, true, false, false) : c.source;
  ASSERT_FALSE(source.empty());
  std::string differentiated = differentiate(source, /*pack=*/false);
  ASSERT_FALSE(differentiated.empty());
  Executable padded = compileWithGrads(c.source, false, c.training);
  Executable packed = compileWithGrads(c.source, true, c.training);
  // LSTM and attention backwards that recompute their forward instead of
  // reading its tape or stats: the same arithmetic, so the same gradients.
  Executable recomputed =
      compileWithGrads(c.source, false, c.training, /*saveForward=*/false);
  const Manifest &manifest = padded.manifest();
  std::vector<ShapeRun> runs{{LengthPattern::Mixed, 3, 5},
                             {LengthPattern::AllEqual, 2, 3},
                             {LengthPattern::WithEmpty, 4, 4},
                             {LengthPattern::AllEqual, 1, 1}};
  uint32_t seed = 3;
  // What fills the padded frames of the second pair of runs: NaN, +inf,
  // -inf in turn.
  const double kPads[] = {std::numeric_limits<double>::quiet_NaN(),
                          std::numeric_limits<double>::infinity(),
                          -std::numeric_limits<double>::infinity()};
  for (const ShapeRun &run : runs) {
    double pad = kPads[(seed - 3) % 3];
    SCOPED_TRACE("length pattern " + std::to_string((int)run.pattern) +
                 ", batch " + std::to_string(run.batch) + ", padded " +
                 std::to_string(run.padded) + ", padding " +
                 std::to_string(pad));
    RunInputs inputs =
        makeInputs(manifest, seed++, run.pattern, run.batch, run.padded);
    // The reference's analytic gradients: the differentiated graph's
    // results, one per parameter in module order.
    reference::Result analytic;
    absl::Status status =
        reference::evaluate(differentiated, "g", inputs, analytic);
    ASSERT_TRUE(status.ok()) << status.message();
    RunResult a, b, nanPadded, nanPacked, again;
    status = padded.run(inputs, a);
    ASSERT_TRUE(status.ok()) << status.message();
    status = recomputed.run(inputs, again);
    ASSERT_TRUE(status.ok()) << status.message();
    status = packed.run(inputs, b);
    ASSERT_TRUE(status.ok()) << status.message();
    std::map<std::string, Tensor> got = gradientsOf(a),
                                  gotPacked = gradientsOf(b),
                                  gotRecomputed = gradientsOf(again);
    ASSERT_EQ(got.size(), manifest.parameters.size());
    // The gradients, in result order (a graph with computed dims also
    // returns their lengths, which the reference keeps apart).
    std::vector<std::string> gradientNames;
    for (const TensorInfo &output : manifest.outputs)
      if (output.name.rfind("grad:", 0) == 0)
        gradientNames.push_back(output.name.substr(5));
    ASSERT_EQ(analytic.outputs.size(), gradientNames.size());

    RunInputs nanInputs =
        makeInputs(manifest, seed - 1, run.pattern, run.batch, run.padded, pad);
    // Padded runs compute on the non-finite frames and must mask them;
    // packed runs drop them before the tail.
    status = padded.run(nanInputs, nanPadded);
    ASSERT_TRUE(status.ok()) << status.message();
    status = packed.run(nanInputs, nanPacked);
    ASSERT_TRUE(status.ok()) << status.message();
    std::map<std::string, Tensor> gotNan = gradientsOf(nanPadded),
                                  gotNanPacked = gradientsOf(nanPacked);
    // The reference reads every value as a double: float64 copies of the
    // parameters take perturbations float32 cannot hold.
    RunInputs wide = inputs;
    for (auto &[name, tensor] : wide.parameters) {
      Tensor f64(DType::f64, tensor.shape());
      for (int64_t i = 0; i < tensor.numElements(); ++i)
        f64.data<double>()[i] = tensor.at(i);
      tensor = std::move(f64);
    }

    for (size_t o = 0; o < gradientNames.size(); ++o) {
      const std::string &name = gradientNames[o];
      const reference::Array &want = analytic.outputs[o];
      const Tensor &compiled = got.at(name);
      ASSERT_EQ(compiled.shape(), want.shape) << name;
      for (int64_t i = 0; i < compiled.numElements(); ++i) {
        // Central differences of the reference objective, in float64.
        Tensor &p = wide.parameters.at(name);
        double saved = p.at(i), h = 1e-5 * std::max(1.0, std::fabs(saved));
        p.data<double>()[i] = saved + h;
        double up = objective(source, manifest, wide);
        p.data<double>()[i] = saved - h;
        double down = objective(source, manifest, wide);
        p.data<double>()[i] = saved;
        double fd = (up - down) / (2 * h);
        EXPECT_TRUE(close(want.data[i], fd, 1e-6, 1e-8))
            << name << "[" << i << "]: reference analytic " << want.data[i]
            << ", finite differences " << fd;
        EXPECT_TRUE(close(compiled.at(i), want.data[i], 1e-3, 1e-5))
            << name << "[" << i << "]: compiled " << compiled.at(i)
            << ", reference " << want.data[i];
        EXPECT_TRUE(close(gotPacked.at(name).at(i), compiled.at(i), 1e-5, 1e-7))
            << name << "[" << i << "]: packed " << gotPacked.at(name).at(i)
            << ", padded " << compiled.at(i);
        EXPECT_EQ(gotRecomputed.at(name).at(i), compiled.at(i))
            << name << "[" << i
            << "]: forwards recomputed, tape and stats saved";
        EXPECT_TRUE(std::isfinite(gotNan.at(name).at(i)))
            << name << "[" << i << "] with non-finite padding";
        EXPECT_TRUE(close(gotNan.at(name).at(i), compiled.at(i), 1e-6, 1e-8))
            << name << "[" << i << "]: padding changed it (padded run)";
        EXPECT_TRUE(close(gotNanPacked.at(name).at(i), gotPacked.at(name).at(i),
                          1e-6, 1e-8))
            << name << "[" << i << "]: padding changed it (packed run)";
      }
    }
  }
}

/// Gradients with respect to a graph input on request, through a
/// bidirectional LSTM and a conv1d (both sequence-mixing, so the padded
/// frames sit next to real ones): compiled packed and padded against the
/// reference, the reference against central differences over every real
/// frame, and exactly 0 at every padded frame, which holds NaN.
TEST(InputGradientTest, MatchesFiniteDifferencesAndIsZeroOnPadding) {
  const std::string source = R"(
nn.parameter @k : !nn.tensor<[4, 3, 2], f32>
nn.parameter @wi : !nn.tensor<[2, 8, 4], f32>
nn.parameter @wh : !nn.tensor<[2, 8, 2], f32>
nn.parameter @b : !nn.tensor<[2, 8], f32>
nn.parameter @wo : !nn.tensor<[3, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 2], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %k = nn.param_ref @k : !nn.tensor<[4, 3, 2], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[2, 8, 4], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[2, 8, 2], f32>
  %b = nn.param_ref @b : !nn.tensor<[2, 8], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[3, 4], f32>
  %c = nn.conv1d %x, %k stride 1 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[4, 3, 2], f32>) -> !nn.tensor<[B, T, 4], f32>
  %h = nn.lstm bidirectional %c, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[2, 8, 4], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>
  %l = nn.linear %h, %wo : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})";
  std::string differentiated =
      transform(source, false, false, true, {std::string("x")});
  ASSERT_FALSE(differentiated.empty());
  CompileOptions options;
  options.grads = true;
  options.inputGradients = {"x"};
  options.optimize.pack = false;
  Executable padded = compileOrDie(source, options);
  options.optimize.pack = true;
  Executable packed = compileOrDie(source, options);
  const Manifest &manifest = padded.manifest();
  ASSERT_EQ(manifest.outputs.back().name, "grad_input:x");
  RunInputs inputs = makeInputs(manifest, 29, LengthPattern::WithEmpty, 4, 5);
  RunInputs nanInputs = makeInputs(manifest, 29, LengthPattern::WithEmpty, 4, 5,
                                   std::numeric_limits<double>::quiet_NaN());
  reference::Result analytic;
  absl::Status status =
      reference::evaluate(differentiated, "g", inputs, analytic);
  ASSERT_TRUE(status.ok()) << status.message();
  const reference::Array &want = analytic.outputs.back();
  RunResult a, b;
  ASSERT_TRUE(padded.run(nanInputs, a).ok());
  ASSERT_TRUE(packed.run(nanInputs, b).ok());
  const Tensor *gotPadded = a.inputGradient("x"),
               *gotPacked = b.inputGradient("x");
  ASSERT_TRUE(gotPadded && gotPacked);
  ASSERT_EQ(gotPadded->shape(), want.shape);
  // Float64 copies of the input for finite differences.
  RunInputs wide = inputs;
  Tensor x64(DType::f64, inputs.inputs["x"].shape());
  for (int64_t i = 0; i < x64.numElements(); ++i)
    x64.data<double>()[i] = inputs.inputs["x"].at(i);
  const std::vector<int32_t> &lengths = inputs.lengths.at("T");
  int64_t time = want.shape[1], width = want.shape[2];
  for (int64_t i = 0; i < x64.numElements(); ++i) {
    int64_t sequence = i / (time * width), frame = (i / width) % time;
    SCOPED_TRACE("x[" + std::to_string(i) + "]");
    if (frame >= lengths[sequence]) {
      EXPECT_EQ(gotPadded->at(i), 0.0) << "padded frame, padded run";
      EXPECT_EQ(gotPacked->at(i), 0.0) << "padded frame, packed run";
      EXPECT_EQ(want.data[i], 0.0) << "padded frame, reference";
      continue;
    }
    double saved = x64.at(i), h = 1e-5;
    x64.data<double>()[i] = saved + h;
    wide.inputs["x"] = x64;
    double up = objective(source, manifest, wide);
    x64.data<double>()[i] = saved - h;
    wide.inputs["x"] = x64;
    double down = objective(source, manifest, wide);
    x64.data<double>()[i] = saved;
    double fd = (up - down) / (2 * h);
    EXPECT_TRUE(close(want.data[i], fd, 1e-6, 1e-8))
        << "reference " << want.data[i] << ", finite differences " << fd;
    EXPECT_TRUE(close(gotPadded->at(i), want.data[i], 1e-3, 1e-5))
        << "compiled " << gotPadded->at(i) << ", reference " << want.data[i];
    EXPECT_TRUE(close(gotPacked->at(i), gotPadded->at(i), 1e-5, 1e-7))
        << "packed " << gotPacked->at(i) << ", padded " << gotPadded->at(i);
  }
}

/// The LSTM runs its sequences sorted by length, each step on the running
/// ones only (RecurrentPatterns.cpp, StepOrder): batches whose order that
/// changes, with tied lengths, empty sequences, one sequence, and no frame
/// at all. The parameter and input gradients of a bidirectional LSTM after
/// a conv1d match the float64 reference (rel 1e-3), and NaN in every
/// padded frame changes none of them.
TEST(LstmStepOrderTest, UnsortedTiedAndEmptyBatches) {
  const std::string source = R"(
nn.parameter @k : !nn.tensor<[4, 3, 2], f32>
nn.parameter @wi : !nn.tensor<[2, 8, 4], f32>
nn.parameter @wh : !nn.tensor<[2, 8, 2], f32>
nn.parameter @b : !nn.tensor<[2, 8], f32>
nn.parameter @fi : !nn.tensor<[12, 4], f32>
nn.parameter @fh : !nn.tensor<[12, 3], f32>
nn.parameter @fb : !nn.tensor<[12], f32>
nn.parameter @wo : !nn.tensor<[3, 7], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 2], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %k = nn.param_ref @k : !nn.tensor<[4, 3, 2], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[2, 8, 4], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[2, 8, 2], f32>
  %b = nn.param_ref @b : !nn.tensor<[2, 8], f32>
  %fi = nn.param_ref @fi : !nn.tensor<[12, 4], f32>
  %fh = nn.param_ref @fh : !nn.tensor<[12, 3], f32>
  %fb = nn.param_ref @fb : !nn.tensor<[12], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[3, 7], f32>
  %c = nn.conv1d %x, %k stride 1 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[4, 3, 2], f32>) -> !nn.tensor<[B, T, 4], f32>
  %h = nn.lstm bidirectional %c, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[2, 8, 4], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>
  %r = nn.lstm backward %c, %fi, %fh, %fb : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[12, 4], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>
  %both = nn.concat %h, %r : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 3], f32>
  %l = nn.linear %both, %wo : !nn.tensor<[B, T, 7], f32>, !nn.tensor<[3, 7], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize sum : !nn.tensor<[B, T], f32>
  nn.return
})";
  std::string differentiated =
      transform(source, false, false, true, {std::string("x")});
  ASSERT_FALSE(differentiated.empty());
  CompileOptions options;
  options.grads = true;
  options.inputGradients = {"x"};
  options.optimize.pack = false;
  Executable tape = compileOrDie(source, options);
  options.optimize.saveLstmTape = false;
  Executable recomputed = compileOrDie(source, options);
  const Manifest &manifest = tape.manifest();
  const std::vector<std::vector<int32_t>> batches{
      {2, 5, 0, 5, 1, 3}, {0, 0, 0}, {4}, {1, 3, 3, 2}};
  uint32_t seed = 41;
  for (const std::vector<int32_t> &lengths : batches) {
    int64_t batch = lengths.size(), time = 5;
    SCOPED_TRACE("lengths " + ::testing::PrintToString(lengths));
    RunInputs inputs =
        makeInputs(manifest, seed++, LengthPattern::AllEqual, batch, time);
    inputs.lengths["T"] = lengths;
    RunInputs nanInputs = withNanPadding(inputs, lengths, time, 2);
    reference::Result analytic;
    absl::Status status =
        reference::evaluate(differentiated, "g", inputs, analytic);
    ASSERT_TRUE(status.ok()) << status.message();
    RunResult a, b, c;
    ASSERT_TRUE(tape.run(inputs, a).ok());
    ASSERT_TRUE(tape.run(nanInputs, b).ok());
    ASSERT_TRUE(recomputed.run(nanInputs, c).ok());
    // The reference's outputs: one gradient per parameter in module
    // order, then the input's.
    std::vector<std::string> names;
    for (const TensorInfo &output : manifest.outputs)
      if (output.name.rfind("grad:", 0) == 0)
        names.push_back(output.name.substr(5));
    ASSERT_EQ(analytic.outputs.size(), names.size() + 1);
    std::map<std::string, Tensor> got = gradientsOf(a), gotNan = gradientsOf(b),
                                  gotRecomputed = gradientsOf(c);
    for (size_t o = 0; o < names.size(); ++o) {
      const reference::Array &want = analytic.outputs[o];
      const Tensor &compiled = got.at(names[o]);
      ASSERT_EQ(compiled.shape(), want.shape) << names[o];
      for (int64_t i = 0; i < compiled.numElements(); ++i) {
        EXPECT_TRUE(close(compiled.at(i), want.data[i], 1e-3, 1e-5))
            << names[o] << "[" << i << "]: compiled " << compiled.at(i)
            << ", reference " << want.data[i];
        EXPECT_EQ(gotNan.at(names[o]).at(i), compiled.at(i))
            << names[o] << "[" << i << "] with NaN padding";
        EXPECT_EQ(gotRecomputed.at(names[o]).at(i), compiled.at(i))
            << names[o] << "[" << i << "] recomputed, NaN padding";
      }
    }
    const reference::Array &wantInput = analytic.outputs.back();
    const Tensor *gotInput = a.inputGradient("x");
    const Tensor *gotInputNan = b.inputGradient("x");
    ASSERT_TRUE(gotInput && gotInputNan);
    ASSERT_EQ(gotInput->shape(), wantInput.shape);
    for (int64_t i = 0; i < gotInput->numElements(); ++i) {
      EXPECT_TRUE(close(gotInput->at(i), wantInput.data[i], 1e-3, 1e-5))
          << "x[" << i << "]: compiled " << gotInput->at(i) << ", reference "
          << wantInput.data[i];
      EXPECT_EQ(gotInputNan->at(i), gotInput->at(i))
          << "x[" << i << "] with NaN padding";
    }
  }
}

/// `source` (a graph @g over x [B, T, F] and per-frame or per-sequence
/// targets) compiled with pack-frontier=earliest (the pack at the input)
/// and with loss-tail (the sequence-mixing ops on padded frames): the loss,
/// every parameter gradient and the input gradient agree within `rel`
/// (0: bit for bit, where the two layouts read the same values in the same
/// order), with NaN in every padded frame, over batches that reorder, tie,
/// hold empty sequences or no frame at all. Both match the float64
/// reference of the graph packed by the default frontier (rel 1e-3), and
/// that reference the padded graph's (rel 1e-9). `prepare` sets what else
/// each batch needs.
void expectFrontiersAgree(
    const std::string &source, int64_t features, uint32_t seed, double rel,
    const std::function<void(RunInputs &)> &prepare = nullptr) {
  std::string packedGraph = transform(source, false, true, true, {"x"});
  std::string paddedGraph = transform(source, false, false, true, {"x"});
  ASSERT_FALSE(packedGraph.empty());
  ASSERT_FALSE(paddedGraph.empty());
  CompileOptions options;
  options.grads = true;
  options.inputGradients = {"x"};
  options.optimize.packFrontier = PackFrontier::earliest;
  Executable packed = compileOrDie(source, options);
  options.optimize.packFrontier = PackFrontier::lossTail;
  Executable padded = compileOrDie(source, options);
  const Manifest &manifest = packed.manifest();
  const std::vector<std::vector<int32_t>> batches{
      {2, 5, 0, 5, 1, 3}, {0, 0, 0}, {4}, {1, 3, 3, 2}};
  for (const std::vector<int32_t> &lengths : batches) {
    int64_t batch = lengths.size(), time = 5;
    SCOPED_TRACE("lengths " + ::testing::PrintToString(lengths));
    RunInputs inputs =
        makeInputs(manifest, seed++, LengthPattern::AllEqual, batch, time);
    inputs.lengths["T"] = lengths;
    if (prepare)
      prepare(inputs);
    RunInputs nanInputs = withNanPadding(inputs, lengths, time, features);
    reference::Result wantPacked, wantPadded;
    absl::Status status =
        reference::evaluate(packedGraph, "g", inputs, wantPacked);
    ASSERT_TRUE(status.ok()) << status.message();
    status = reference::evaluate(paddedGraph, "g", inputs, wantPadded);
    ASSERT_TRUE(status.ok()) << status.message();
    RunResult a, b;
    status = packed.run(nanInputs, a);
    ASSERT_TRUE(status.ok()) << status.message();
    status = padded.run(nanInputs, b);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_EQ(wantPacked.outputs.size(), wantPadded.outputs.size());
    for (size_t o = 0; o < wantPacked.outputs.size(); ++o)
      for (size_t i = 0; i < wantPacked.outputs[o].data.size(); ++i)
        EXPECT_TRUE(close(wantPacked.outputs[o].data[i],
                          wantPadded.outputs[o].data[i], 1e-9, 1e-12))
            << "reference output " << o << "[" << i << "]";
    ASSERT_EQ(a.outputs.size(), b.outputs.size());
    for (size_t o = 0; o < a.outputs.size(); ++o) {
      const auto &[name, got] = a.outputs[o];
      const Tensor &want = b.outputs[o].second;
      ASSERT_EQ(got.shape(), want.shape()) << name;
      for (int64_t i = 0; i < got.numElements(); ++i) {
        if (rel == 0)
          EXPECT_EQ(got.at(i), want.at(i)) << name << "[" << i << "]";
        else
          EXPECT_TRUE(close(got.at(i), want.at(i), rel, rel * 1e-2))
              << name << "[" << i << "]: packed " << got.at(i) << ", padded "
              << want.at(i);
      }
    }
    // The reference's outputs: one gradient per parameter in module order,
    // then the input's.
    std::map<std::string, Tensor> got = gradientsOf(a);
    std::vector<std::string> names;
    for (const TensorInfo &output : manifest.outputs)
      if (output.name.rfind("grad:", 0) == 0)
        names.push_back(output.name.substr(5));
    ASSERT_EQ(wantPacked.outputs.size(), names.size() + 1);
    for (size_t o = 0; o < names.size(); ++o) {
      const reference::Array &want = wantPacked.outputs[o];
      const Tensor &compiled = got.at(names[o]);
      ASSERT_EQ(compiled.shape(), want.shape) << names[o];
      for (int64_t i = 0; i < compiled.numElements(); ++i)
        EXPECT_TRUE(close(compiled.at(i), want.data[i], 1e-3, 1e-5))
            << names[o] << "[" << i << "]: compiled " << compiled.at(i)
            << ", reference " << want.data[i];
    }
    const Tensor *input = a.inputGradient("x");
    ASSERT_TRUE(input);
    const reference::Array &wantInput = wantPacked.outputs.back();
    ASSERT_EQ(input->shape(), wantInput.shape);
    for (int64_t i = 0; i < input->numElements(); ++i)
      EXPECT_TRUE(close(input->at(i), wantInput.data[i], 1e-3, 1e-5))
          << "x[" << i << "]: compiled " << input->at(i) << ", reference "
          << wantInput.data[i];
  }
}

/// CTC labels for a batch of expectFrontiersAgree: sequence b gets
/// (b * step + T_b) % 3 labels (0 to 2, some too many for their frames),
/// the classes 1 to 4 in turn.
void setCtcLabels(RunInputs &inputs, size_t step) {
  const std::vector<int32_t> &frames = inputs.lengths.at("T");
  std::vector<int32_t> &labels = inputs.lengths["U"];
  labels.clear();
  for (size_t b = 0; b < frames.size(); ++b)
    labels.push_back(static_cast<int32_t>((b * step + frames[b]) % 3));
  Tensor &ids = inputs.inputs.at("labels");
  for (int64_t i = 0; i < ids.numElements(); ++i)
    ids.data<int32_t>()[i] = 1 + static_cast<int32_t>(i % 4);
}

/// Stacked LSTMs on packed frames and on padded ones (expectFrontiersAgree);
/// the default frontier packs both LSTMs here.
TEST(PackedLstmTest, PackedMatchesPaddedBitForBit) {
  const std::string source = R"(
nn.parameter @wi : !nn.tensor<[2, 8, 3], f32>
nn.parameter @wh : !nn.tensor<[2, 8, 2], f32>
nn.parameter @b : !nn.tensor<[2, 8], f32>
nn.parameter @wi2 : !nn.tensor<[12, 4], f32>
nn.parameter @wh2 : !nn.tensor<[12, 3], f32>
nn.parameter @b2 : !nn.tensor<[12], f32>
nn.parameter @wo : !nn.tensor<[5, 3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %wi = nn.param_ref @wi : !nn.tensor<[2, 8, 3], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[2, 8, 2], f32>
  %b = nn.param_ref @b : !nn.tensor<[2, 8], f32>
  %wi2 = nn.param_ref @wi2 : !nn.tensor<[12, 4], f32>
  %wh2 = nn.param_ref @wh2 : !nn.tensor<[12, 3], f32>
  %b2 = nn.param_ref @b2 : !nn.tensor<[12], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[5, 3], f32>
  %h1 = nn.lstm bidirectional %x, %wi, %wh, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[2, 8, 3], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>
  %a = nn.tanh %h1 : !nn.tensor<[B, T, 4], f32>
  %h2 = nn.lstm backward %a, %wi2, %wh2, %b2 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[12, 4], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>
  %l = nn.linear %h2, %wo : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})";
  std::string packedGraph = transform(source, false, true, true, {"x"});
  for (const char *lstmInput :
       {"!nn.tensor<[N_T, 3], f32>, !nn.tensor<[2, 8, 3]",
        "!nn.tensor<[N_T, 4], f32>, !nn.tensor<[12, 4]"})
    ASSERT_NE(packedGraph.find(lstmInput), std::string::npos)
        << "the default frontier left an LSTM padded:\n"
        << packedGraph;
  expectFrontiersAgree(source, 3, 57, /*rel=*/0);
}

/// A BLSTM with a CTC loss (no frame-wise loss at all): packed, the CTC
/// loss reads packed logits and its gradient is packed rows; label
/// sequences of 0 to 2 labels, some too long for their frames
/// (zero_infinity). Not bit for bit: at the loss-tail frontier the output
/// layer's GEMMs run over B * T_max rows, packed over N, and the GEMM
/// library blocks the sums over rows differently (last-ulp differences).
TEST(PackedCtcTest, PackedMatchesPadded) {
  const std::string source = R"(
nn.parameter @wi : !nn.tensor<[2, 8, 3], f32>
nn.parameter @wh : !nn.tensor<[2, 8, 2], f32>
nn.parameter @b : !nn.tensor<[2, 8], f32>
nn.parameter @wo : !nn.tensor<[5, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %wi = nn.param_ref @wi : !nn.tensor<[2, 8, 3], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[2, 8, 2], f32>
  %b = nn.param_ref @b : !nn.tensor<[2, 8], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[5, 4], f32>
  %h = nn.lstm bidirectional %x, %wi, %wh, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[2, 8, 3], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>
  %l = nn.linear %h, %wo : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  %ctc = nn.ctc_loss %l, %labels from logits blank 0 zero_infinity : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
})";
  std::string packedGraph = transform(source, false, true, true, {"x"});
  ASSERT_NE(packedGraph.find("nn.ctc_loss_grad %"), std::string::npos);
  ASSERT_NE(packedGraph.find("!nn.tensor<[N_T, 5], f32>, !nn.tensor<[B, U]"),
            std::string::npos)
      << "the default frontier left the CTC loss padded:\n"
      << packedGraph;
  expectFrontiersAgree(source, 3, 63, /*rel=*/1e-5,
                       [](RunInputs &inputs) { setCtcLabels(inputs, 5); });
}

/// conv1d (one group and grouped, with Cout / G != Cin / G) and pool on
/// packed frames, strided too (packed(B, T) in, packed(B, T2) out),
/// written packed against the same graph written padded, with NaN in every
/// padded frame and empty sequences. With
/// generated loops the loss and every gradient agree bit for bit (the
/// packed windows visit the same frames in the same order and never reach
/// into the next sequence's rows). With BLAS (the default) a one-group
/// conv is GEMMs, whose summation order depends on the row count (B * T2
/// padded, N2 packed): they agree within rel 1e-5. Both match the float64
/// reference (rel 1e-3).
TEST(PackedConvPoolTest, PackedMatchesPadded) {
  auto source = [](bool packed) {
    std::string n = packed ? "N" : "B, T", n2 = packed ? "N2" : "B, T2";
    std::string x = packed ? "%px" : "%x";
    std::string text = R"(
nn.parameter @k : !nn.tensor<[4, 3, 2], f32>
nn.parameter @kb : !nn.tensor<[4], f32>
nn.parameter @k1 : !nn.tensor<[3, 2, 4], f32>
nn.parameter @kg : !nn.tensor<[6, 3, 2], f32>
nn.parameter @wo : !nn.tensor<[3, 15], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 2], f32>, %y: !nn.tensor<[B, T2], i32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), N: packed(B, T), N2: packed(B, T2)] {
  %k = nn.param_ref @k : !nn.tensor<[4, 3, 2], f32>
  %kb = nn.param_ref @kb : !nn.tensor<[4], f32>
  %k1 = nn.param_ref @k1 : !nn.tensor<[3, 2, 4], f32>
  %kg = nn.param_ref @kg : !nn.tensor<[6, 3, 2], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[3, 15], f32>
)";
    if (packed)
      text += "  %px = nn.pack %x : !nn.tensor<[B, T, 2], f32> -> "
              "!nn.tensor<[N, 2], f32>\n";
    text += "  %c = nn.conv1d " + x + ", %k, %kb stride 2 : (!nn.tensor<[" + n +
            ", 2], f32>, !nn.tensor<[4, 3, 2], f32>, !nn.tensor<[4], " +
            "f32>) -> !nn.tensor<[" + n2 + ", 4], f32>\n";
    text += "  %a = nn.pool avg %c window 3 stride 1 : (!nn.tensor<[" + n2 +
            ", 4], f32>) -> !nn.tensor<[" + n2 + ", 4], f32>\n";
    text += "  %c1 = nn.conv1d %a, %k1 stride 1 : (!nn.tensor<[" + n2 +
            ", 4], f32>, !nn.tensor<[3, 2, 4], f32>) -> !nn.tensor<[" + n2 +
            ", 3], f32>\n";
    text += "  %m = nn.pool max " + x + " window 3 stride 2 : (!nn.tensor<[" +
            n + ", 2], f32>) -> !nn.tensor<[" + n2 + ", 2], f32>\n";
    // Two groups: output channels 0-2 read input channels 0-1, 3-5 read
    // 2-3. It reads %c, not %a: a third gradient contribution to %a would
    // be summed in a different order packed and padded (the order of the
    // gradient sum, not the conv), which is not bit for bit.
    text += "  %g = nn.conv1d %c, %kg stride 1 groups 2 : (!nn.tensor<[" + n2 +
            ", 4], f32>, !nn.tensor<[6, 3, 2], f32>) -> !nn.tensor<[" + n2 +
            ", 6], f32>\n";
    text += "  %cat = nn.concat %a, %c1, %m, %g : !nn.tensor<[" + n2 +
            ", 4], f32>, !nn.tensor<[" + n2 + ", 3], f32>, !nn.tensor<[" + n2 +
            ", 2], f32>, !nn.tensor<[" + n2 + ", 6], f32>\n";
    text += "  %l = nn.linear %cat, %wo : !nn.tensor<[" + n2 +
            ", 15], f32>, !nn.tensor<[3, 15], f32>\n";
    std::string labels = "%y";
    if (packed) {
      text += "  %py = nn.pack %y : !nn.tensor<[B, T2], i32> -> "
              "!nn.tensor<[N2], i32>\n";
      labels = "%py";
    }
    text += "  %ce = nn.cross_entropy %l, " + labels +
            " from logits : !nn.tensor<[" + n2 + ", 3], f32>, !nn.tensor<[" +
            n2 + "], i32>\n";
    text += "  nn.mark_loss %ce as \"ce\" normalize per_frame : !nn.tensor<[" +
            n2 + "], f32>\n  nn.return\n}\n";
    return text;
  };
  CompileOptions options;
  options.grads = true;
  options.inputGradients = {"x"};
  // The padded graph's loss tail is packed too, so that both sum the same
  // frame losses in the same order.
  options.optimize.packFrontier = PackFrontier::lossTail;
  std::string reference = transform(source(true), false, false, true, {"x"});
  ASSERT_FALSE(reference.empty());
  for (bool blas : {false, true}) {
    SCOPED_TRACE(blas ? "BLAS" : "generated loops");
    options.codegen.blas = blas;
    Executable packed = compileOrDie(source(true), options);
    Executable padded = compileOrDie(source(false), options);
    const Manifest &manifest = packed.manifest();
    const std::vector<std::vector<int32_t>> batches{
        {7, 1, 0, 4, 6}, {0, 0}, {3}, {2, 7, 7}};
    uint32_t seed = 91;
    for (const std::vector<int32_t> &lengths : batches) {
      int64_t batch = lengths.size(), time = 7;
      SCOPED_TRACE("lengths " + ::testing::PrintToString(lengths));
      RunInputs inputs =
          makeInputs(manifest, seed++, LengthPattern::AllEqual, batch, time);
      inputs.lengths["T"] = lengths;
      // T2's lengths follow from T's; the labels' padded axis is T2's.
      Tensor &y = inputs.inputs["y"];
      ASSERT_EQ(y.shape(), (std::vector<int64_t>{batch, (time + 1) / 2}));
      RunInputs nanInputs = withNanPadding(inputs, lengths, time, 2);
      reference::Result want;
      absl::Status status = reference::evaluate(reference, "g", inputs, want);
      ASSERT_TRUE(status.ok()) << status.message();
      RunResult a, b;
      status = packed.run(nanInputs, a);
      ASSERT_TRUE(status.ok()) << status.message();
      status = padded.run(nanInputs, b);
      ASSERT_TRUE(status.ok()) << status.message();
      ASSERT_EQ(a.outputs.size(), b.outputs.size());
      for (size_t o = 0; o < a.outputs.size(); ++o) {
        const auto &[name, got] = a.outputs[o];
        const Tensor &other = b.outputs[o].second;
        ASSERT_EQ(got.shape(), other.shape()) << name;
        for (int64_t i = 0; i < got.numElements(); ++i) {
          if (blas)
            EXPECT_TRUE(close(got.at(i), other.at(i), 1e-5, 1e-7))
                << name << "[" << i << "]: packed " << got.at(i) << ", padded "
                << other.at(i);
          else
            EXPECT_EQ(got.at(i), other.at(i)) << name << "[" << i << "]";
        }
      }
      std::map<std::string, Tensor> got = gradientsOf(a);
      std::vector<std::string> names;
      for (const TensorInfo &output : manifest.outputs)
        if (output.name.rfind("grad:", 0) == 0)
          names.push_back(output.name.substr(5));
      ASSERT_EQ(want.outputs.size(), names.size() + 1);
      for (size_t o = 0; o < names.size(); ++o) {
        const Tensor &compiled = got.at(names[o]);
        ASSERT_EQ(compiled.shape(), want.outputs[o].shape) << names[o];
        for (int64_t i = 0; i < compiled.numElements(); ++i)
          EXPECT_TRUE(
              close(compiled.at(i), want.outputs[o].data[i], 1e-3, 1e-5))
              << names[o] << "[" << i << "]: compiled " << compiled.at(i)
              << ", reference " << want.outputs[o].data[i];
      }
      const Tensor *input = a.inputGradient("x");
      ASSERT_TRUE(input);
      ASSERT_EQ(input->shape(), want.outputs.back().shape);
      for (int64_t i = 0; i < input->numElements(); ++i)
        EXPECT_TRUE(
            close(input->at(i), want.outputs.back().data[i], 1e-3, 1e-5))
            << "x[" << i << "]: compiled " << input->at(i) << ", reference "
            << want.outputs.back().data[i];
    }
  }
}

/// A x4 Conformer-style front end (two stride-2 conv1d, T -> T2 -> T4),
/// layer norm, self-attention and a CTC loss over T4. Each value packs
/// over its own dim: pack=earliest runs the first convolution on the
/// packed input [N_T, 3] and the rest on packed(B, T2) and packed(B, T4)
/// rows, against the loss-tail frontier, where the convolutions and
/// attention stay padded (expectFrontiersAgree). The default frontier packs
/// at the same place as earliest here.
TEST(PackedCtcTest, StridedFrontEndPackedMatchesPadded) {
  const std::string source = R"(
nn.parameter @k1 : !nn.tensor<[4, 3, 3], f32>
nn.parameter @b1 : !nn.tensor<[4], f32>
nn.parameter @k2 : !nn.tensor<[4, 3, 4], f32>
nn.parameter @gain : !nn.tensor<[4], f32>
nn.parameter @shift : !nn.tensor<[4], f32>
nn.parameter @wq : !nn.tensor<[4, 4], f32>
nn.parameter @wo : !nn.tensor<[5, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B), T2: seq(B) = ceildiv(T, 2),
          T4: seq(B) = ceildiv(T2, 2)] {
  %k1 = nn.param_ref @k1 : !nn.tensor<[4, 3, 3], f32>
  %b1 = nn.param_ref @b1 : !nn.tensor<[4], f32>
  %k2 = nn.param_ref @k2 : !nn.tensor<[4, 3, 4], f32>
  %gain = nn.param_ref @gain : !nn.tensor<[4], f32>
  %shift = nn.param_ref @shift : !nn.tensor<[4], f32>
  %wq = nn.param_ref @wq : !nn.tensor<[4, 4], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[5, 4], f32>
  %c1 = nn.conv1d %x, %k1, %b1 stride 2 : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3, 3], f32>, !nn.tensor<[4], f32>) -> !nn.tensor<[B, T2, 4], f32>
  %r1 = nn.silu %c1 : !nn.tensor<[B, T2, 4], f32>
  %c2 = nn.conv1d %r1, %k2 stride 2 : (!nn.tensor<[B, T2, 4], f32>, !nn.tensor<[4, 3, 4], f32>) -> !nn.tensor<[B, T4, 4], f32>
  %n = nn.layer_norm %c2, %gain, %shift : !nn.tensor<[B, T4, 4], f32>, !nn.tensor<[4], f32>, !nn.tensor<[4], f32>
  %q = nn.linear %n, %wq : !nn.tensor<[B, T4, 4], f32>, !nn.tensor<[4, 4], f32>
  %a = nn.attention %q, %n, %n heads 2 : !nn.tensor<[B, T4, 4], f32>, !nn.tensor<[B, T4, 4], f32>, !nn.tensor<[B, T4, 4], f32>
  %h = nn.add %a, %n : !nn.tensor<[B, T4, 4], f32>
  %l = nn.linear %h, %wo : !nn.tensor<[B, T4, 4], f32>, !nn.tensor<[5, 4], f32>
  %ctc = nn.ctc_loss %l, %labels from logits blank 0 zero_infinity : !nn.tensor<[B, T4, 5], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
})";
  for (PackFrontier frontier : {PackFrontier::earliest, PackFrontier::cost}) {
    std::string packed =
        transform(source, false, true, true, {"x"}, "", frontier);
    for (const char *packedConv :
         {"(!nn.tensor<[N_T, 3], f32>, !nn.tensor<[4, 3, 3], f32>, "
          "!nn.tensor<[4], f32>) -> !nn.tensor<[N_T2, 4], f32>",
          "(!nn.tensor<[N_T2, 4], f32>, !nn.tensor<[4, 3, 4], f32>) -> "
          "!nn.tensor<[N_T4, 4], f32>"})
      ASSERT_NE(packed.find(packedConv), std::string::npos)
          << "a strided convolution stayed padded:\n"
          << packed;
    ASSERT_NE(packed.find("heads 2 : !nn.tensor<[N_T4, 4], f32>"),
              std::string::npos)
        << "the attention stayed padded:\n"
        << packed;
  }
  expectFrontiersAgree(source, 3, 71, /*rel=*/1e-5,
                       [](RunInputs &inputs) { setCtcLabels(inputs, 1); });
}

/// The three examples, differentiated whole (the decoupled loss graph
/// through its call of the model): packed gradients within rel 1e-5 of
/// padded ones, both within rel 1e-3 of the float64 reference evaluating
/// the differentiated module, and unchanged by NaN in every padded frame.
class ExampleGradientTest : public ::testing::TestWithParam<const char *> {};

TEST_P(ExampleGradientTest, PackedMatchesPaddedAndReference) {
  std::string source = readExample(GetParam());
  ASSERT_FALSE(source.empty());
  std::string differentiated = differentiate(source, /*pack=*/false);
  ASSERT_FALSE(differentiated.empty());
  Executable padded = compileWithGrads(source, false);
  Executable packed = compileWithGrads(source, true);
  const Manifest &manifest = padded.manifest();
  ASSERT_FALSE(manifest.parameters.empty());
  uint32_t seed = 17;
  for (const ShapeRun &run : {ShapeRun{LengthPattern::Mixed, 3, 7},
                              ShapeRun{LengthPattern::WithEmpty, 2, 4}}) {
    SCOPED_TRACE("length pattern " + std::to_string((int)run.pattern));
    RunInputs inputs =
        makeInputs(manifest, seed, run.pattern, run.batch, run.padded);
    RunInputs nanInputs =
        makeInputs(manifest, seed++, run.pattern, run.batch, run.padded,
                   std::numeric_limits<double>::quiet_NaN());
    RunResult a, b, c;
    absl::Status status = padded.run(inputs, a);
    ASSERT_TRUE(status.ok()) << status.message();
    status = packed.run(inputs, b);
    ASSERT_TRUE(status.ok()) << status.message();
    status = packed.run(nanInputs, c);
    ASSERT_TRUE(status.ok()) << status.message();
    reference::Result want;
    status = reference::evaluate(differentiated, manifest.graph, inputs, want);
    ASSERT_TRUE(status.ok()) << status.message();
    std::vector<std::string> names = a.gradientNames();
    ASSERT_EQ(names.size(), manifest.parameters.size());
    ASSERT_EQ(want.outputs.size(), manifest.outputs.size());
    size_t firstGradient = manifest.outputs.size() - names.size();
    for (size_t g = 0; g < names.size(); ++g) {
      const std::string &name = names[g];
      const Tensor &pad = *a.gradient(name), &pack = *b.gradient(name),
                   &nan = *c.gradient(name);
      const reference::Array &ref = want.outputs[firstGradient + g];
      ASSERT_EQ(pad.shape(), ref.shape) << name;
      int mismatches = 0;
      for (int64_t i = 0; i < pad.numElements() && mismatches < 5; ++i) {
        bool ok = close(pack.at(i), pad.at(i), 1e-5, 1e-7) &&
                  close(pad.at(i), ref.data[i], 1e-3, 1e-5) &&
                  close(nan.at(i), pack.at(i), 1e-6, 1e-8);
        if (!ok)
          ++mismatches;
        EXPECT_TRUE(ok) << name << "[" << i << "]: padded " << pad.at(i)
                        << ", packed " << pack.at(i) << ", reference "
                        << ref.data[i] << ", packed with NaN padding "
                        << nan.at(i);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleGradientTest,
                         ::testing::Values("blstm_ce_ctc.mlir",
                                           "conv_encoder_decoupled_loss.mlir",
                                           "shared_tail_two_losses.mlir"),
                         [](const auto &info) {
                           std::string name = info.param;
                           return name.substr(0, name.find('.'));
                         });

/// The CTC gradient op on chosen sequences: labels with a repeat, U = T
/// (one alignment), an infeasible sequence (too few frames for a repeat),
/// an empty one; NaN in every padded frame. Checked against the
/// reference, the reference against finite differences of its own CTC
/// loss, and the U = T sequence against its closed form softmax - one-hot.
class CtcGradientTest : public ::testing::TestWithParam<bool> {};

TEST_P(CtcGradientTest, BoundaryCasesMatchReferenceAndFiniteDifferences) {
  bool zeroInfinity = GetParam();
  std::string zi = zeroInfinity ? " zero_infinity" : "";
  std::string types = "!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>";
  std::string dims = "dims [B: batch, T: seq(B), U: seq(B)]";
  std::string gradSource =
      "nn.graph @g(%g: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T, 3], f32>, "
      "%y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, T, 3], f32> " +
      dims + " {\n  %d = nn.ctc_loss_grad %g, %x, %y from logits blank 0" + zi +
      " : !nn.tensor<[B], f32>, " + types +
      "\n  nn.return %d : !nn.tensor<[B, T, 3], f32>\n}\n";
  std::string lossSource =
      "nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], "
      "i32>) -> !nn.tensor<[B], f32> " +
      dims + " {\n  %l = nn.ctc_loss %x, %y from logits blank 0" + zi + " : " +
      types + "\n  nn.return %l : !nn.tensor<[B], f32>\n}\n";
  SCOPED_TRACE(gradSource);
  Executable exe = compileOrDie(gradSource, /*pack=*/false);

  // Padded T = 4, U = 3.
  const std::vector<int32_t> frames{4, 2, 2, 0, 3}, labelCounts{2, 2, 2, 0, 3};
  const std::vector<std::vector<int32_t>> labels{
      {1, 1}, {1, 2}, {2, 2}, {}, {2, 1, 2}};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  RunInputs inputs;
  inputs.lengths["T"] = frames;
  inputs.lengths["U"] = labelCounts;
  inputs.inputs["g"] =
      Tensor::of<float>(DType::f32, {5}, {1.0f, 0.5f, 2.0f, 1.0f, -1.5f});
  Tensor x(DType::f32, {5, 4, 3});
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  for (int64_t b = 0; b < 5; ++b)
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t c = 0; c < 3; ++c)
        x.data<float>()[(b * 4 + t) * 3 + c] =
            t < frames[b] ? uniform(rng) : static_cast<float>(nan);
  inputs.inputs["x"] = x;
  Tensor y(DType::i32, {5, 3});
  for (int64_t b = 0; b < 5; ++b)
    for (int64_t u = 0; u < 3; ++u)
      y.data<int32_t>()[b * 3 + u] =
          u < labelCounts[b] ? labels[b][u] : 7; // padding: out of range
  inputs.inputs["y"] = y;

  RunResult result;
  absl::Status status = exe.run(inputs, result);
  ASSERT_TRUE(status.ok()) << status.message();
  const Tensor &got = result.outputs.at(0).second;
  reference::Result want;
  status = reference::evaluate(gradSource, "g", inputs, want);
  ASSERT_TRUE(status.ok()) << status.message();

  // The reference against central differences of its own CTC loss:
  // d/dx[b] of g_b loss_b (other sequences' losses do not depend on it, and
  // without zero_infinity the infeasible one is +inf).
  RunInputs wide;
  wide.lengths = inputs.lengths;
  wide.inputs["y"] = y;
  Tensor x64(DType::f64, {5, 4, 3});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x64.data<double>()[i] = x.at(i);
  auto weightedLoss = [&](int64_t b) {
    wide.inputs["x"] = x64;
    reference::Result losses;
    absl::Status s = reference::evaluate(lossSource, "g", wide, losses);
    EXPECT_TRUE(s.ok()) << s.message();
    return inputs.inputs["g"].at(b) * losses.outputs[0].data[b];
  };
  for (int64_t b = 0; b < 5; ++b)
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t c = 0; c < 3; ++c) {
        SCOPED_TRACE("sequence " + std::to_string(b) + ", frame " +
                     std::to_string(t) + ", class " + std::to_string(c));
        int64_t i = (b * 4 + t) * 3 + c;
        double compiled = got.at(i), reference = want.outputs[0].data[i];
        if (t >= frames[b]) {
          EXPECT_EQ(compiled, 0.0) << "padded frame";
          continue;
        }
        if (b == 2) { // infeasible: two 2s need three frames
          if (zeroInfinity)
            EXPECT_EQ(compiled, 0.0);
          else
            EXPECT_TRUE(std::isnan(compiled)) << compiled;
          continue;
        }
        EXPECT_TRUE(close(compiled, reference, 1e-4, 1e-6))
            << "compiled " << compiled << ", reference " << reference;
        double saved = x64.data<double>()[i], h = 1e-6;
        x64.data<double>()[i] = saved + h;
        double up = weightedLoss(b);
        x64.data<double>()[i] = saved - h;
        double down = weightedLoss(b);
        x64.data<double>()[i] = saved;
        EXPECT_TRUE(close(reference, (up - down) / (2 * h), 1e-6, 1e-8))
            << "reference " << reference << ", finite differences "
            << (up - down) / (2 * h);
        if (b == 1 || b == 4) { // U = T: the only alignment emits labels[t]
          double max = -std::numeric_limits<double>::infinity(), sum = 0;
          for (int64_t k = 0; k < 3; ++k)
            max = std::max(max, x64.at((b * 4 + t) * 3 + k));
          for (int64_t k = 0; k < 3; ++k)
            sum += std::exp(x64.at((b * 4 + t) * 3 + k) - max);
          double softmax = std::exp(saved - max) / sum;
          double closed = inputs.inputs["g"].at(b) *
                          (softmax - (c == labels[b][t] ? 1.0 : 0.0));
          EXPECT_TRUE(close(compiled, closed, 1e-4, 1e-6))
              << "compiled " << compiled << ", softmax - one-hot " << closed;
        }
      }
}

INSTANTIATE_TEST_SUITE_P(ZeroInfinity, CtcGradientTest, ::testing::Bool());

/// CTC with log-probabilities of -inf (classes the input rules out at a
/// frame), both at a label of the sequence and at the blank, every
/// sequence still feasible: alpha and beta are -inf at those states, and
/// the gradient there must be 0, not the NaN of taking the -inf emission
/// back out of their sum. From log-probs, and from logits with -inf
/// logits. Against the float64 reference, itself checked against finite
/// differences of its own loss at the finite entries.
class CtcInfiniteLogProbTest : public ::testing::TestWithParam<bool> {};

TEST_P(CtcInfiniteLogProbTest, GradientIsZeroWhereLogProbIsMinusInfinity) {
  bool fromLogits = GetParam();
  std::string kind = fromLogits ? "logits" : "log_probs";
  std::string types = "!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>";
  std::string dims = "dims [B: batch, T: seq(B), U: seq(B)]";
  std::string source =
      "nn.graph @g(%g: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T, 4], f32>, "
      "%y: !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B], f32>, "
      "!nn.tensor<[B, T, 4], f32>) " +
      dims + " {\n  %l = nn.ctc_loss %x, %y from " + kind +
      " blank 0 : " + types + "\n  %d = nn.ctc_loss_grad %g, %x, %y from " +
      kind + " blank 0 : !nn.tensor<[B], f32>, " + types +
      "\n  nn.return %l, %d : !nn.tensor<[B], f32>, "
      "!nn.tensor<[B, T, 4], f32>\n}\n";
  std::string lossSource =
      "nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, U], "
      "i32>) -> !nn.tensor<[B], f32> " +
      dims + " {\n  %l = nn.ctc_loss %x, %y from " + kind +
      " blank 0 : " + types + "\n  nn.return %l : !nn.tensor<[B], f32>\n}\n";
  SCOPED_TRACE(source);
  Executable exe = compileOrDie(source, /*pack=*/false);

  // Padded T = 4, U = 2. Sequence 0, labels 1 2: label 2 ruled out at
  // frame 0, the blank at frame 1, label 1 at frame 3, class 3 (no label)
  // at frame 2; 1 1 2 2 still fits. Sequence 1, label 3 in 3 frames:
  // the blank ruled out at frame 0, label 3 at frame 2; 3 - - fits.
  const std::vector<int32_t> frames{4, 3}, labelCounts{2, 1};
  const std::vector<std::vector<int32_t>> labels{{1, 2}, {3}};
  const std::vector<std::array<int64_t, 3>> ruledOut{
      {0, 0, 2}, {0, 1, 0}, {0, 3, 1}, {0, 2, 3}, {1, 0, 0}, {1, 2, 3}};
  const double negInf = -std::numeric_limits<double>::infinity();
  RunInputs inputs;
  inputs.lengths["T"] = frames;
  inputs.lengths["U"] = labelCounts;
  inputs.inputs["g"] = Tensor::of<float>(DType::f32, {2}, {1.0f, -0.5f});
  Tensor x(DType::f32, {2, 4, 4});
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> uniform(fromLogits ? -2.0f : -3.0f,
                                                fromLogits ? 2.0f : -0.1f);
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data<float>()[i] = uniform(rng);
  auto at = [](int64_t b, int64_t t, int64_t c) { return (b * 4 + t) * 4 + c; };
  for (auto [b, t, c] : ruledOut)
    x.data<float>()[at(b, t, c)] = static_cast<float>(negInf);
  inputs.inputs["x"] = x;
  Tensor y(DType::i32, {2, 2});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t u = 0; u < 2; ++u)
      y.data<int32_t>()[b * 2 + u] = u < labelCounts[b] ? labels[b][u] : 0;
  inputs.inputs["y"] = y;

  RunResult result;
  absl::Status status = exe.run(inputs, result);
  ASSERT_TRUE(status.ok()) << status.message();
  reference::Result want;
  status = reference::evaluate(source, "g", inputs, want);
  ASSERT_TRUE(status.ok()) << status.message();
  const Tensor &loss = result.outputs.at(0).second;
  const Tensor &got = result.outputs.at(1).second;
  for (int64_t b = 0; b < 2; ++b) {
    EXPECT_TRUE(std::isfinite(want.outputs[0].data[b])) << "infeasible";
    EXPECT_TRUE(close(loss.at(b), want.outputs[0].data[b], 1e-5))
        << "sequence " << b << ": loss " << loss.at(b) << ", reference "
        << want.outputs[0].data[b];
  }

  RunInputs wide;
  wide.lengths = inputs.lengths;
  wide.inputs["y"] = y;
  Tensor x64(DType::f64, {2, 4, 4});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x64.data<double>()[i] = x.at(i);
  auto weightedLoss = [&](int64_t b) {
    wide.inputs["x"] = x64;
    reference::Result losses;
    absl::Status s = reference::evaluate(lossSource, "g", wide, losses);
    EXPECT_TRUE(s.ok()) << s.message();
    return inputs.inputs["g"].at(b) * losses.outputs[0].data[b];
  };
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 4; ++t)
      for (int64_t c = 0; c < 4; ++c) {
        SCOPED_TRACE("sequence " + std::to_string(b) + ", frame " +
                     std::to_string(t) + ", class " + std::to_string(c));
        int64_t i = at(b, t, c);
        double compiled = got.at(i), reference = want.outputs[1].data[i];
        EXPECT_TRUE(std::isfinite(compiled)) << compiled;
        EXPECT_TRUE(std::isfinite(reference)) << reference;
        if (t >= frames[b] || x.at(i) == negInf) {
          EXPECT_EQ(compiled, 0.0);
          EXPECT_EQ(reference, 0.0);
          continue;
        }
        EXPECT_TRUE(close(compiled, reference, 1e-4, 1e-6))
            << "compiled " << compiled << ", reference " << reference;
        double saved = x64.data<double>()[i], h = 1e-6;
        x64.data<double>()[i] = saved + h;
        double up = weightedLoss(b);
        x64.data<double>()[i] = saved - h;
        double down = weightedLoss(b);
        x64.data<double>()[i] = saved;
        EXPECT_TRUE(close(reference, (up - down) / (2 * h), 1e-6, 1e-8))
            << "reference " << reference << ", finite differences "
            << (up - down) / (2 * h);
      }
}

INSTANTIATE_TEST_SUITE_P(InputKind, CtcInfiniteLogProbTest, ::testing::Bool(),
                         [](const auto &info) {
                           return info.param ? "Logits" : "LogProbs";
                         });

INSTANTIATE_TEST_SUITE_P(Families, GradientTest, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return info.param.name; });

} // namespace
