//===- Decoding.cpp - hypotheses from a graph's results -------------------===//

#include "training/Decoding.h"

#include <algorithm>
#include <cstdio>
#include <limits>

using namespace nn;
using namespace nn::training;

namespace {

/// "i32 [B, Y]", for messages.
std::string typeText(const TensorInfo &info) {
  std::string text = std::string(toString(info.dtype)) + " [";
  for (size_t i = 0; i < info.axes.size(); ++i) {
    const Axis &axis = info.axes[i];
    text += (i ? ", " : "") +
            (axis.isNamed() ? axis.dim : std::to_string(axis.size));
  }
  return text + "]";
}

bool isBatchAxis(const Manifest &manifest, const Axis &axis) {
  if (!axis.isNamed())
    return false;
  const DimInfo *dim = manifest.findDim(axis.dim);
  return dim && dim->kind == DimInfo::Kind::batch;
}

const Tensor *findOutput(const RunResult &result, const std::string &name) {
  for (const auto &[outputName, tensor] : result.outputs)
    if (outputName == name)
      return &tensor;
  return nullptr;
}

/// The layout of an N-best graph: result0 [B, K, Y] i32 with K a
/// computed sequence dim of B and Y a computed sequence dim of
/// flatten(B, K), both returned; result1, if any, [B, K].
absl::StatusOr<HypothesisLayout>
nBestLayout(const Manifest &manifest,
            const std::vector<const TensorInfo *> &results,
            HypothesisLayout layout) {
  const std::string graph = "graph @" + manifest.graph;
  const TensorInfo &labels = *results[0];
  const std::string labelsName = graph + " result0 (" + typeText(labels) + ")";
  const std::string &batch = labels.axes[0].dim;
  const DimInfo *list = manifest.findDim(labels.axes[1].dim);
  const DimInfo *hypothesis = manifest.findDim(labels.axes[2].dim);
  const DimInfo *flat =
      hypothesis ? manifest.findDim(hypothesis->batch) : nullptr;
  if (!list || !hypothesis || !flat || !flat->isFlatten() ||
      flat->source != batch || flat->inner != list->name)
    return absl::InvalidArgumentError(
        labelsName + " is not an N-best list: expected [B, K, Y] i32 with Y a "
                     "sequence dim of a batch declared flatten(B, K)");
  for (const DimInfo *dim : {list, hypothesis}) {
    if (!dim->computed)
      return absl::InvalidArgumentError(
          labelsName + ": '" + dim->name +
          "' is not computed by the graph; an N-best list's hypotheses "
          "and their lengths come from its search");
    const std::string name = lengthsOutputName(dim->name);
    auto output =
        std::find_if(manifest.outputs.begin(), manifest.outputs.end(),
                     [&](const TensorInfo &info) { return info.name == name; });
    if (output == manifest.outputs.end())
      return absl::InvalidArgumentError(graph + " returns no '" + name + "'");
  }
  layout.lengthDim = hypothesis->name;
  layout.lengthsOutput = lengthsOutputName(hypothesis->name);
  layout.listLengthsOutput = lengthsOutputName(list->name);
  if (results.size() > 1) {
    const TensorInfo &score = *results[1];
    if ((score.dtype != DType::f32 && score.dtype != DType::f64) ||
        score.axes.size() != 2 || score.axes[0].dim != batch ||
        score.axes[1].dim != list->name)
      return absl::InvalidArgumentError(
          graph + " result1 (" + typeText(score) +
          ") is not a score per hypothesis: expected [" + batch + ", " +
          list->name + "] f32");
    layout.score = score.name;
  }
  if (results.size() > 2)
    return absl::InvalidArgumentError(
        graph + " returns " + std::to_string(results.size()) +
        " results; a decoding graph returns its hypotheses (result0) and "
        "optionally their scores (result1)");
  return layout;
}

} // namespace

absl::StatusOr<HypothesisLayout>
nn::training::hypothesisLayout(const Manifest &manifest) {
  HypothesisLayout layout;
  layout.graph = manifest.graph;
  const std::string graph = "graph @" + manifest.graph;
  std::vector<const TensorInfo *> results;
  for (const TensorInfo &output : manifest.outputs)
    if (output.name.rfind("result", 0) == 0)
      results.push_back(&output);
  if (results.empty())
    return absl::InvalidArgumentError(
        graph + " returns no results; a decoding graph returns its "
                "hypotheses as result0, [B, Y] i32 (and their scores as "
                "result1, [B] f32)");
  const TensorInfo &labels = *results[0];
  layout.labels = labels.name;
  const std::string labelsName = graph + " result0 (" + typeText(labels) + ")";
  if (labels.dtype == DType::i32 && labels.axes.size() == 3 &&
      isBatchAxis(manifest, labels.axes[0]))
    return nBestLayout(manifest, results, std::move(layout));
  if (labels.dtype != DType::i32 || labels.axes.size() != 2 ||
      !isBatchAxis(manifest, labels.axes[0]))
    return absl::InvalidArgumentError(
        labelsName + " is not a hypothesis per sequence: expected [B, Y] i32 "
                     "(B the batch, Y the labels' sequence dim)");
  const Axis &labelAxis = labels.axes[1];
  if (labelAxis.isNamed()) {
    const DimInfo *dim = manifest.findDim(labelAxis.dim);
    // Whatever kind a sequence dim is (an input's, derived, or computed
    // by an op), it is not the batch nor packed positions.
    if (!dim || dim->kind == DimInfo::Kind::batch ||
        dim->kind == DimInfo::Kind::packed)
      return absl::InvalidArgumentError(
          labelsName + ": its axis 1, '" + labelAxis.dim +
          "', is not a sequence dim of the batch");
    layout.lengthDim = labelAxis.dim;
    for (const TensorInfo &output : manifest.outputs) {
      if (output.name != "lengths:" + labelAxis.dim)
        continue;
      if (output.dtype != DType::i32 || output.axes.size() != 1 ||
          output.axes[0].dim != labels.axes[0].dim)
        return absl::InvalidArgumentError(
            graph + " output '" + output.name + "' is " + typeText(output) +
            "; the lengths of '" + labelAxis.dim + "' are [" +
            labels.axes[0].dim + "] i32");
      layout.lengthsOutput = output.name;
    }
  } else {
    layout.staticLength = labelAxis.size;
  }
  if (results.size() > 1) {
    const TensorInfo &score = *results[1];
    if ((score.dtype != DType::f32 && score.dtype != DType::f64) ||
        score.axes.size() != 1 || score.axes[0].dim != labels.axes[0].dim)
      return absl::InvalidArgumentError(
          graph + " result1 (" + typeText(score) +
          ") is not a score per hypothesis: expected [" + labels.axes[0].dim +
          "] f32");
    layout.score = score.name;
  }
  if (results.size() > 2)
    return absl::InvalidArgumentError(
        graph + " returns " + std::to_string(results.size()) +
        " results; a decoding graph returns its hypotheses (result0) and "
        "optionally their scores (result1)");
  return layout;
}

absl::StatusOr<std::vector<std::vector<Hypothesis>>>
nn::training::readNBest(const HypothesisLayout &layout, const RunResult &result,
                        const DimValues &dims) {
  std::vector<std::vector<Hypothesis>> lists;
  if (!layout.isNBest()) {
    absl::StatusOr<std::vector<Hypothesis>> best =
        readHypotheses(layout, result, dims);
    if (!best.ok())
      return best.status();
    for (Hypothesis &hypothesis : *best)
      lists.push_back({std::move(hypothesis)});
    return lists;
  }
  // What the artifact returned is checked like any untrusted input.
  const std::string graph = "graph @" + layout.graph;
  const Tensor *labels = findOutput(result, layout.labels);
  if (!labels || labels->dtype() != DType::i32 || labels->rank() != 3)
    return absl::InvalidArgumentError(graph + " returned no " + layout.labels +
                                      " [B, K, Y] i32");
  int64_t rows = labels->shape()[0], slots = labels->shape()[1],
          padded = labels->shape()[2];
  const Tensor *counts = findOutput(result, layout.listLengthsOutput);
  if (!counts || counts->dtype() != DType::i32 ||
      counts->shape() != std::vector<int64_t>{rows})
    return absl::InvalidArgumentError(graph + " returned no '" +
                                      layout.listLengthsOutput + "' [" +
                                      std::to_string(rows) + "] i32");
  int64_t entries = 0;
  for (int64_t b = 0; b < rows; ++b) {
    int32_t count = counts->data<int32_t>()[b];
    if (count < 0 || count > slots)
      return absl::InvalidArgumentError(
          graph + " gives batch row " + std::to_string(b) + " " +
          std::to_string(count) + " hypotheses, outside the " +
          std::to_string(slots) + " slots of " + layout.labels);
    entries += count;
  }
  const Tensor *lengths = findOutput(result, layout.lengthsOutput);
  if (!lengths || lengths->dtype() != DType::i32 ||
      lengths->shape() != std::vector<int64_t>{entries})
    return absl::InvalidArgumentError(graph + " returned no '" +
                                      layout.lengthsOutput + "' [" +
                                      std::to_string(entries) + "] i32");
  const Tensor *scores = nullptr;
  if (!layout.score.empty()) {
    scores = findOutput(result, layout.score);
    if (!scores || scores->shape() != std::vector<int64_t>{rows, slots})
      return absl::InvalidArgumentError(graph + " returned no " + layout.score +
                                        " [" + std::to_string(rows) + ", " +
                                        std::to_string(slots) + "]");
  }
  int64_t entry = 0;
  for (int64_t b = 0; b < rows; ++b) {
    std::vector<Hypothesis> &list = lists.emplace_back();
    for (int32_t k = 0; k < counts->data<int32_t>()[b]; ++k, ++entry) {
      int32_t length = lengths->data<int32_t>()[entry];
      if (length < 0 || length > padded)
        return absl::InvalidArgumentError(
            graph + " gives hypothesis " + std::to_string(k) +
            " of batch row " + std::to_string(b) + " length " +
            std::to_string(length) + ", outside the " + std::to_string(padded) +
            " positions of " + layout.labels);
      const int32_t *row = labels->data<int32_t>() + (b * slots + k) * padded;
      Hypothesis &hypothesis = list.emplace_back();
      hypothesis.labels.assign(row, row + length);
      if (scores)
        hypothesis.score = scores->at(b * slots + k);
    }
  }
  return lists;
}

absl::StatusOr<std::vector<Hypothesis>>
nn::training::readHypotheses(const HypothesisLayout &layout,
                             const RunResult &result, const DimValues &dims) {
  if (layout.isNBest()) {
    // The best of each list; no hypothesis at all reads as the empty one
    // that no path reaches.
    absl::StatusOr<std::vector<std::vector<Hypothesis>>> lists =
        readNBest(layout, result, dims);
    if (!lists.ok())
      return lists.status();
    std::vector<Hypothesis> best;
    for (std::vector<Hypothesis> &list : *lists) {
      Hypothesis &first = best.emplace_back();
      if (!list.empty())
        first = std::move(list.front());
      else if (!layout.score.empty())
        first.score = -std::numeric_limits<double>::infinity();
    }
    return best;
  }
  const std::string graph = "graph @" + layout.graph;
  const Tensor *labels = findOutput(result, layout.labels);
  if (!labels || labels->dtype() != DType::i32 || labels->rank() != 2)
    return absl::InvalidArgumentError(graph + " returned no " + layout.labels +
                                      " [B, Y] i32");
  int64_t rows = labels->shape()[0], padded = labels->shape()[1];
  std::vector<int64_t> lengths(rows, padded);
  if (!layout.lengthsOutput.empty()) {
    const Tensor *returned = findOutput(result, layout.lengthsOutput);
    if (!returned || returned->dtype() != DType::i32 ||
        returned->shape() != std::vector<int64_t>{rows})
      return absl::InvalidArgumentError(graph + " returned no '" +
                                        layout.lengthsOutput + "' [" +
                                        std::to_string(rows) + "] i32");
    for (int64_t b = 0; b < rows; ++b)
      lengths[b] = returned->data<int32_t>()[b];
  } else if (!layout.lengthDim.empty()) {
    auto found = dims.lengths.find(layout.lengthDim);
    if (found == dims.lengths.end() || (int64_t)found->second.size() != rows)
      return absl::InvalidArgumentError(
          graph + ": the batch gives no lengths of '" + layout.lengthDim +
          "', the hypotheses' dim, and the graph returns none ('lengths:" +
          layout.lengthDim + "')");
    for (int64_t b = 0; b < rows; ++b)
      lengths[b] = found->second[b];
  }
  const Tensor *scores = nullptr;
  if (!layout.score.empty()) {
    scores = findOutput(result, layout.score);
    if (!scores || scores->shape() != std::vector<int64_t>{rows})
      return absl::InvalidArgumentError(graph + " returned no " + layout.score +
                                        " [" + std::to_string(rows) + "]");
  }
  std::vector<Hypothesis> hypotheses(rows);
  for (int64_t b = 0; b < rows; ++b) {
    if (lengths[b] < 0 || lengths[b] > padded)
      return absl::InvalidArgumentError(
          graph + " gives batch row " + std::to_string(b) +
          " a hypothesis of length " + std::to_string(lengths[b]) + " along '" +
          layout.lengthDim + "', outside the " + std::to_string(padded) +
          " positions of " + layout.labels);
    const int32_t *row = labels->data<int32_t>() + b * padded;
    hypotheses[b].labels.assign(row, row + lengths[b]);
    if (scores)
      hypotheses[b].score = scores->at(b);
  }
  return hypotheses;
}

const char *nn::training::toString(ErrorUnit unit) {
  return unit == ErrorUnit::word ? "word" : "label";
}

absl::StatusOr<Scored> nn::training::score(absl::Span<const int32_t> hypothesis,
                                           absl::Span<const int32_t> reference,
                                           const Vocabulary *vocabulary) {
  Scored scored;
  if (!vocabulary) {
    scored.counts = editDistance(hypothesis, reference);
    return scored;
  }
  absl::StatusOr<std::vector<std::string>> hypothesisWords =
      vocabulary->words(hypothesis);
  if (!hypothesisWords.ok())
    return withContext(hypothesisWords.status(), "the hypothesis: ");
  absl::StatusOr<std::vector<std::string>> referenceWords =
      vocabulary->words(reference);
  if (!referenceWords.ok())
    return withContext(referenceWords.status(), "the reference: ");
  scored.counts = editDistance(*hypothesisWords, *referenceWords);
  auto join = [](const std::vector<std::string> &words) {
    std::string text;
    for (const std::string &word : words)
      text += (text.empty() ? "" : " ") + word;
    return text;
  };
  scored.text = join(*hypothesisWords);
  scored.referenceText = join(*referenceWords);
  return scored;
}

absl::Status nn::training::checkUniqueIds(const Dataset &dataset,
                                          const std::string &who) {
  std::map<std::string, int64_t> seen;
  for (int64_t u = 0; u < dataset.size(); ++u) {
    auto [at, added] = seen.emplace(dataset.utteranceId(u), u);
    if (added)
      continue;
    auto where = [&](int64_t v) {
      auto [shard, index] = dataset.origin(v);
      return "utterance " + std::to_string(index) + " of '" +
             dataset.shardPath(shard) + "'";
    };
    return absl::InvalidArgumentError(
        "utterance id '" + at->first + "' names both " + where(at->second) +
        " and " + where(u) + "; " + who + " names each hypothesis by its id");
  }
  return absl::OkStatus();
}

absl::StatusOr<DecodeTotals> nn::training::decodeDataset(
    const Executable &executable, const HypothesisLayout &layout,
    const Dataset &dataset, const std::map<std::string, Tensor> &parameters,
    const DecodeOptions &options,
    const std::function<absl::Status(const DecodedUtterance &)> &each) {
  DecodeTotals totals;
  totals.utterances = dataset.size();
  totals.leftOut = dataset.leftOut();
  if (dataset.keepsWithoutFrames())
    totals.withoutFrames = dataset.withoutFrames();
  else
    totals.leftOut += dataset.withoutFrames();
  totals.scoring =
      !options.reference.empty() && dataset.hasHostArray(options.reference);
  totals.unit = options.vocabulary ? ErrorUnit::word : ErrorUnit::label;
  const Vocabulary *vocabulary = options.vocabulary;

  // Scores, spells and hands on one utterance whose hypotheses are set.
  auto finish = [&](DecodedUtterance &decoded) -> absl::Status {
    auto utteranceError = [&](const absl::Status &status) {
      return withContext(status, "utterance '" + decoded.id + "': ");
    };
    if (totals.scoring) {
      decoded.reference =
          dataset.hostSequence(options.reference, decoded.utterance);
      absl::StatusOr<Scored> made =
          score(decoded.hypothesis.labels, decoded.reference, vocabulary);
      if (!made.ok())
        return utteranceError(made.status());
      decoded.scored = std::move(*made);
      totals.errors.add(decoded.scored->counts);
    }
    if (vocabulary) {
      if (decoded.scored) {
        decoded.text = decoded.scored->text;
      } else {
        absl::StatusOr<std::string> spelled =
            vocabulary->text(decoded.hypothesis.labels);
        if (!spelled.ok())
          return utteranceError(
              withContext(spelled.status(), "the hypothesis: "));
        decoded.text = *spelled;
      }
      for (const Hypothesis &alternative : decoded.nBest) {
        absl::StatusOr<std::string> spelled =
            vocabulary->text(alternative.labels);
        if (!spelled.ok())
          return utteranceError(
              withContext(spelled.status(), "a hypothesis of its N-best: "));
        decoded.nBestText.push_back(*spelled);
      }
    }
    return each(decoded);
  };

  // An utterance without frames is not run: no frames spell no label, so
  // its hypothesis is the empty one, scored 0 (log 1) as the dialect's
  // decoders score a sequence without frames, and its N-best list is that
  // hypothesis alone. The graph's losses do not count it.
  int64_t next = 0;
  auto finishWithoutFramesBefore = [&](int64_t end) -> absl::Status {
    for (; next < end; ++next) {
      if (dataset.length(next) > 0 || options.part != 0)
        continue;
      DecodedUtterance decoded;
      decoded.utterance = next;
      decoded.id = dataset.utteranceId(next);
      decoded.withoutFrames = true;
      if (!layout.score.empty())
        decoded.hypothesis.score = 0.0;
      decoded.isNBest = layout.isNBest();
      if (decoded.isNBest)
        decoded.nBest.push_back(decoded.hypothesis);
      if (absl::Status status = finish(decoded); !status.ok())
        return status;
    }
    return absl::OkStatus();
  };

  BatchingOptions batching;
  batching.maxSequences = options.batchSize;
  batching.maxFrames = options.maxFrames;
  batching.bucket = false;
  batching.shuffle = false;
  if (options.parts < 1 || options.part < 0 || options.part >= options.parts)
    return absl::InvalidArgumentError("decoding part " +
                                      std::to_string(options.part) + " of " +
                                      std::to_string(options.parts));
  // Batches in file order, so utterances without frames are handed on
  // between them at their place in the dataset.
  std::vector<std::vector<int64_t>> batches =
      epochBatches(dataset, batching, 0);
  for (size_t i = 0; i < batches.size(); ++i) {
    if ((int64_t)(i % options.parts) != options.part)
      continue;
    const std::vector<int64_t> &members = batches[i];
    if (absl::Status status = finishWithoutFramesBefore(members.front());
        !status.ok())
      return status;
    auto context = [&](const std::string &what) {
      return "the batch of utterances '" + dataset.utteranceId(members[0]) +
             "' .. '" + dataset.utteranceId(members.back()) + "': " + what;
    };
    RunInputs inputs = dataset.batch(members);
    inputs.parameters = parameters;
    DimValues dims;
    if (absl::Status status = executable.validate(inputs, dims); !status.ok())
      return withContext(status, context(""));
    RunResult result;
    if (absl::Status status = executable.run(inputs, result); !status.ok())
      return withContext(status, context(""));
    totals.losses.add(result.losses);
    absl::StatusOr<std::vector<std::vector<Hypothesis>>> lists =
        readNBest(layout, result, dims);
    if (!lists.ok())
      return withContext(lists.status(), context(""));
    for (size_t b = 0; b < members.size(); ++b) {
      if (absl::Status status = finishWithoutFramesBefore(members[b]);
          !status.ok())
        return status;
      DecodedUtterance decoded;
      decoded.utterance = members[b];
      decoded.id = dataset.utteranceId(members[b]);
      std::vector<Hypothesis> &list = (*lists)[b];
      if (!list.empty())
        decoded.hypothesis = list.front();
      else if (!layout.score.empty())
        decoded.hypothesis.score = -std::numeric_limits<double>::infinity();
      decoded.isNBest = layout.isNBest();
      if (decoded.isNBest)
        decoded.nBest = std::move(list);
      if (absl::Status status = finish(decoded); !status.ok())
        return status;
      next = members[b] + 1;
    }
  }
  if (absl::Status status = finishWithoutFramesBefore(dataset.size());
      !status.ok())
    return status;
  return totals;
}

support::JsonObject
nn::training::hypothesisJson(const DecodedUtterance &decoded, bool vocabulary) {
  auto labels = [](absl::Span<const int32_t> values) {
    support::JsonArray array;
    for (int32_t label : values)
      array.push(label);
    return array;
  };
  support::JsonObject line;
  line.add("utt", decoded.id).add("hyp", labels(decoded.hypothesis.labels));
  if (decoded.hypothesis.score)
    line.add("score", *decoded.hypothesis.score);
  if (vocabulary)
    line.add("text", decoded.text);
  if (decoded.scored) {
    line.add("ref", labels(decoded.reference));
    if (vocabulary)
      line.add("ref_text", decoded.scored->referenceText);
    line.add("errors", decoded.scored->counts.errors())
        .add("ref_len", decoded.scored->counts.referenceLength);
  }
  if (decoded.isNBest) {
    support::JsonArray list;
    for (size_t k = 0; k < decoded.nBest.size(); ++k) {
      support::JsonObject entry;
      entry.add("hyp", labels(decoded.nBest[k].labels));
      if (decoded.nBest[k].score)
        entry.add("score", *decoded.nBest[k].score);
      if (vocabulary && k < decoded.nBestText.size())
        entry.add("text", decoded.nBestText[k]);
      list.push(entry);
    }
    line.add("nbest", list);
  }
  return line;
}

support::JsonObject
nn::training::summaryJson(const DecodeTotals &totals,
                          const support::JsonObject &losses) {
  support::JsonObject summary;
  summary.add("utterances", totals.utterances);
  if (totals.leftOut)
    summary.add("left_out", totals.leftOut);
  if (totals.withoutFrames)
    summary.add("without_frames", totals.withoutFrames);
  if (totals.scoring) {
    const EditCounts &counts = totals.errors.totals();
    summary.add("errors", counts.errors())
        .add("ref_len", counts.referenceLength);
    if (std::optional<double> rate = totals.errors.errorRate())
      summary.add("error_rate", *rate);
    summary.add("unit", toString(totals.unit));
  }
  summary.add("losses", losses);
  return summary;
}

std::string nn::training::errorRateText(const DecodeTotals &totals) {
  if (!totals.scoring)
    return "decoded " + std::to_string(totals.utterances) +
           " utterances (no references)";
  const EditCounts &counts = totals.errors.totals();
  std::string rate = "undefined";
  if (std::optional<double> value = totals.errors.errorRate()) {
    char text[64];
    std::snprintf(text, sizeof(text), "%.2f%%", 100 * *value);
    rate = text;
  }
  return std::string(toString(totals.unit)) + " error rate " + rate + " (" +
         std::to_string(counts.errors()) + " errors / " +
         std::to_string(counts.referenceLength) + " " +
         (totals.unit == ErrorUnit::word ? "words" : "labels") + ", " +
         std::to_string(totals.utterances) + " utterances)";
}
