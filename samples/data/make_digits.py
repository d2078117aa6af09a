#!/usr/bin/env python3
"""Writes the handwritten digits that the training samples learn from.

The 1797 8x8 images of scikit-learn's digits data set (a copy of the UCI
"Optical Recognition of Handwritten Digits" test set, grey levels 0 to 16),
split once, stratified and with a fixed seed, into 1437 training and 360
held-out images, as four NumPy files next to this script:

  digits_train_images.npy  uint8 [1437, 64]   row-major 8x8 pixels, 0..16
  digits_train_labels.npy  uint8 [1437]       the digit, 0..9
  digits_test_images.npy   uint8 [360, 64]
  digits_test_labels.npy   uint8 [360]

The files are committed, so nothing here runs in a build; rerun it only to
regenerate them (needs numpy and scikit-learn, which ships the data; no
network):  python3 samples/data/make_digits.py
"""

import pathlib

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

HERE = pathlib.Path(__file__).resolve().parent


def main() -> None:
    digits = load_digits()
    images = digits.data.astype(np.uint8)  # grey levels 0..16, exact
    labels = digits.target.astype(np.uint8)
    assert images.shape == (1797, 64) and np.array_equal(images, digits.data)
    train_x, test_x, train_y, test_y = train_test_split(
        images, labels, test_size=360, stratify=labels, random_state=0
    )
    for name, array in [
        ("digits_train_images", train_x),
        ("digits_train_labels", train_y),
        ("digits_test_images", test_x),
        ("digits_test_labels", test_y),
    ]:
        np.save(HERE / f"{name}.npy", np.ascontiguousarray(array))
        print(f"wrote {name}.npy {array.dtype} {list(array.shape)}")


if __name__ == "__main__":
    main()
