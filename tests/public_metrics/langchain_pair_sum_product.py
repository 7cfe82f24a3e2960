# ruff: noqa
# fmt: off
# langchain-gepa-adapter walkthrough notebook (pair sum/product): `evaluate_response(data, state)` (returns (score, feedback)).
# Source:  https://github.com/bryonkucharski/langchain-gepa-adapter
# Path:    notebooks/pair_sum_product_walkthrough.ipynb
# Commit:  2e9df38e4ef147af6e6583fb23a4caa3b9a17fa1 (read at this commit, where the file last changed (2026-05-19))
# URL:     https://github.com/bryonkucharski/langchain-gepa-adapter/blob/2e9df38e4ef147af6e6583fb23a4caa3b9a17fa1/notebooks/pair_sum_product_walkthrough.ipynb
# Licence: MIT License, Copyright (c) 2026 Bryon Kucharski (LICENSE at the repository root)
# Changes: none. The notebook's cell 16 (its 13th code cell), copied whole and alone, as a notebook cell is
#          pasted: it uses `re` and `last_message_text` without importing them (cell 3 imports both:
#          `import re` and `from langchain_gepa_adapter import (..., last_message_text, ...)`), and
#          keeps the notebook's two-space indentation. Cell 18 passes it as `eval_fn` to
#          LangChainGEPAAdapter, which gepa.optimize drives.
# Apart from the changes above, the code below is as published.

def evaluate_response(data: dict, state: dict) -> tuple[float, str]:
  correct_answer = data["answer"]
  nums = data["additional_context"]["nums"]
  sums = data["additional_context"]["sums"]

  response = last_message_text(state)
  match = re.search(r"<answer>\s*(\S+)\s*</answer>", response)
  if not match:
      return 0.0, (
          f"Missing <answer> tags. Could not parse answer. "
          f"The correct answer is {correct_answer}."
      )

  parsed = match.group(1).strip()
  if parsed == correct_answer.strip():
      return 1.0, "Correct."

  pairs_str = ", ".join(
      f"{nums[i]}+{nums[i+1]}={sums[i // 2]}" for i in range(0, len(nums), 2)
  )
  return 0.0, (
      f"Wrong answer: you said {parsed}, correct is {correct_answer}. "
      f"Steps: add pairs [{pairs_str}], then multiply sums to get {correct_answer}."
  )
