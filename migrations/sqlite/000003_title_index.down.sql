DROP INDEX thing_index_title_idx;
