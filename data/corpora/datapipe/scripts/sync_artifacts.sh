#!/usr/bin/env bash
# Mirror trained models from the shared volume to S3.
set -euo pipefail

SRC=/mnt/shared/models
DEST="s3://growth-datapipe-artifacts/models"

aws s3 sync "${SRC}" "${DEST}" --exclude "*.tmp" --only-show-diffs
# Old models are expired by the bucket lifecycle rule; we do not
# `aws s3 rm --recursive` anything from here.
echo "synced ${SRC} -> ${DEST}"
