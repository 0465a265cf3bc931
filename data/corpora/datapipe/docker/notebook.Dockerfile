# Jupyter image for analysts; mounts the sqlite extract cache read-only.
# Not for GPUs: analysts who need one use the train image (FROM nvidia/cuda...).
FROM jupyter/scipy-notebook:2024-05-13

COPY requirements/base.txt /tmp/base.txt
RUN pip install -r /tmp/base.txt
RUN pip install jupyterlab-git

ENV DATAPIPE_CACHE=/home/jovyan/cache/extracts.db
