torchrun --nnodes 1 --nproc-per-node 8 pretrain_gpt.py \
  --num-layers 32 \
  --tensor-model-parallel-size two
